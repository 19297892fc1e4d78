(function(componentName = "AsyncAlsPage", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/als","location":"/als","scheme":"http","host":"localhost","port":3000,"pathname":"/als","search":null,"httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"requestId":"req-7f3a9c","userId":42} : props;
  return ReactOnRails[ReactOnRails.isRSCBundle ? 'serverRenderRSCReactComponent' : 'serverRenderReactComponent']({
    name: componentName,
    domNodeId: "AsyncAlsPage-react-component-5b0c6f7e-3a1d-4e2b-9c4f-000000000013",
    props: usedProps,
    trace: true,
    railsContext: railsContext,
    throwJsErrors: false,
    renderingReturnsPromises: true,
  });
})()

(function(componentName = "HelloWorld", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/hello_world","location":"/hello_world","scheme":"http","host":"localhost","port":3000,"pathname":"/hello_world","search":null,"httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"name":"Rails"} : props;
  return ReactOnRails[ReactOnRails.isRSCBundle ? 'serverRenderRSCReactComponent' : 'serverRenderReactComponent']({
    name: componentName,
    domNodeId: "HelloWorld-react-component-5b0c6f7e-3a1d-4e2b-9c4f-000000000001",
    props: usedProps,
    trace: true,
    railsContext: railsContext,
    throwJsErrors: false,
    renderingReturnsPromises: true,
  });
})()

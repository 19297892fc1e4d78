(function(componentName = "NodeApp", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/about?ref=newsletter","location":"/about?ref=newsletter","scheme":"http","host":"localhost","port":3000,"pathname":"/about","search":"ref=newsletter","httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"location":"/about?ref=newsletter","initialState":{"session":{"user":{"name":"Ada Lovelace"},"visits":["/landing"]},"cart":{"items":[{"sku":"tea-01","name":"Earl Grey \u003cloose leaf\u003e","qty":2,"priceCents":1250},{"sku":"mug-07","name":"Mug \"Zürich\" \u0026 saucer","qty":1,"priceCents":899}]}}} : props;
  return ReactOnRails[ReactOnRails.isRSCBundle ? 'serverRenderRSCReactComponent' : 'serverRenderReactComponent']({
    name: componentName,
    domNodeId: "NodeApp-react-component-5b0c6f7e-3a1d-4e2b-9c4f-000000000012",
    props: usedProps,
    trace: true,
    railsContext: railsContext,
    throwJsErrors: false,
    renderingReturnsPromises: true,
  });
})()

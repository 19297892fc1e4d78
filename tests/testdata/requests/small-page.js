(function(componentName = "SmallPage", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/pages/small?ref=nav\u0026lang=en","location":"/pages/small?ref=nav\u0026lang=en","scheme":"http","host":"localhost","port":3000,"pathname":"/pages/small","search":"ref=nav\u0026lang=en","httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"title":"Small page","subtitle":"A typical server-rendered page \u003cwith\u003e \"markup\" \u0026 entities","links":[{"href":"/","label":"Home"},{"href":"/posts","label":"Posts"},{"href":"/about","label":"About us"}],"paragraphs":["gorender renders React for Rails. This paragraph is the lead.","Non-ASCII text survives the round trip: naïve café, Zürich, 日本語, emoji 🚀🎉.","Line separators \u2028 and \u2029 are escaped by Rails JSON; \u003cscript\u003ealert(1)\u003c/script\u003e is escaped by React."],"footer":"© 2024 gorender fixtures"} : props;
  return ReactOnRails[ReactOnRails.isRSCBundle ? 'serverRenderRSCReactComponent' : 'serverRenderReactComponent']({
    name: componentName,
    domNodeId: "SmallPage-react-component-5b0c6f7e-3a1d-4e2b-9c4f-000000000002",
    props: usedProps,
    trace: false,
    railsContext: railsContext,
    throwJsErrors: false,
    renderingReturnsPromises: true,
  });
})()

(function(componentName = "StreamPage", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/stream","location":"/stream","scheme":"http","host":"localhost","port":3000,"pathname":"/stream","search":null,"httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"title":"Streaming \u003cpipeable\u003e page","user":{"name":"Grace Hopper","bio":"Compilers \u0026 COBOL — “debugging” since 1947."},"posts":[{"id":1,"title":"First post","body":"Shell first, then the boundaries."},{"id":2,"title":"Second post","body":"Non-BMP: 🚀 and U+2028 \u2028 inside text."}],"recommendations":["streams","suspense","café"]} : props;
  return renderStream(usedProps, railsContext);
})()

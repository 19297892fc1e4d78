(function(componentName = "CrossPage", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/cross","location":"/cross","scheme":"http","host":"localhost","port":3000,"pathname":"/cross","search":null,"httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"title":"Payload \u003cfrom\u003e another bundle","items":[{"name":"Ada","text":"Notes on the Analytical Engine \u0026 its “programs”."},{"name":"Grace","text":"Non-BMP: 🚀 and U+2028 \u2028 inside text."},{"name":"Katherine","text":"Trajectories, café, orbits."}]} : props;
  var payload = runOnOtherBundle("payload-stream", 'Promise.resolve(PayloadStream.web(' + JSON.stringify(usedProps.items) + ', 50))');
  return renderCrossStream(usedProps, payload, railsContext);
})()

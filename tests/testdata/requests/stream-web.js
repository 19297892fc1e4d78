(function(componentName = "WebPage", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/stream/web","location":"/stream/web","scheme":"http","host":"localhost","port":3000,"pathname":"/stream/web","search":null,"httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"title":"Web stream page","user":{"name":"Katherine Johnson","bio":"Trajectories \u0026 orbits."}} : props;
  return renderWebStream(usedProps, railsContext);
})()

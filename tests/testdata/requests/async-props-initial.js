(function(componentName = "AsyncPropsPage", props = undefined) {
  var railsContext = {"componentRegistryTimeout":5000,"railsEnv":"production","inMailer":false,"i18nLocale":"en","i18nDefaultLocale":"en","rorVersion":"16.6.0","rorPro":true,"rorProVersion":"16.6.0","href":"http://localhost:3000/async-props?tab=comments","location":"/async-props?tab=comments","scheme":"http","host":"localhost","port":3000,"pathname":"/async-props","search":"tab=comments","httpAcceptLanguage":"en-US,en;q=0.9","serverSide":true};
  var usedProps = typeof props === 'undefined' ? {"title":"Async props \u0026 friends"} : props;
  return AsyncPropsApp.render({
    title: usedProps.title,
    expected: ["user","comments","recommendations"],
    railsContext: railsContext,
  });
})()

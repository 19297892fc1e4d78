// A React on Rails render-function (two parameters: props, railsContext) that
// returns a Promise of an HTML string. serverRenderReactComponent then returns
// a Promise (only with renderingReturnsPromises: true) that resolves to the
// result object, so the rendering request's completion value is a Promise.
// Only microtasks are awaited: the renderer's timers may be no-ops.
const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const AsyncGreeting = async (props, railsContext) => {
  console.log('AsyncGreeting: start for', props.name);
  const greeting = await Promise.resolve(props.greeting || 'Hello');
  const locale = await Promise.resolve(railsContext.i18nLocale);
  console.info('AsyncGreeting: resolved after await', { locale });
  return `<div class="async-greeting" lang="${escapeHtml(locale)}">${escapeHtml(greeting)}, ${escapeHtml(props.name)}!</div>`;
};

export default AsyncGreeting;

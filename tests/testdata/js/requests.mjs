// Builds the rendering-request fixtures (tests/testdata/requests/*.js).
//
// Each request is shaped like the code the Rails gem sends to the renderer: an
// immediately invoked function expression that builds railsContext and props
// and returns ReactOnRails.serverRenderReactComponent({...}). Values are
// serialised like Rails' `to_json` (ActiveSupport escapes <, >, & and
// U+2028/U+2029 as \uXXXX; other non-ASCII stays UTF-8).
// Everything here is deterministic: no clock, no randomness.

export const ROR_VERSION = '16.6.0';

export function railsJSON(value) {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function railsContext(path, search) {
  const location = search ? `${path}?${search}` : path;
  return {
    componentRegistryTimeout: 5000,
    railsEnv: 'production',
    inMailer: false,
    i18nLocale: 'en',
    i18nDefaultLocale: 'en',
    rorVersion: ROR_VERSION,
    rorPro: true,
    rorProVersion: ROR_VERSION,
    href: `http://localhost:3000${location}`,
    location,
    scheme: 'http',
    host: 'localhost',
    port: 3000,
    pathname: path,
    search: search || null,
    httpAcceptLanguage: 'en-US,en;q=0.9',
    serverSide: true,
  };
}

function renderingRequest({ name, domNodeId, props, trace, context }) {
  return `(function(componentName = ${railsJSON(name)}, props = undefined) {
  var railsContext = ${railsJSON(context)};
  var usedProps = typeof props === 'undefined' ? ${railsJSON(props)} : props;
  return ReactOnRails[ReactOnRails.isRSCBundle ? 'serverRenderRSCReactComponent' : 'serverRenderReactComponent']({
    name: componentName,
    domNodeId: ${railsJSON(domNodeId)},
    props: usedProps,
    trace: ${trace},
    railsContext: railsContext,
    throwJsErrors: false,
    renderingReturnsPromises: true,
  });
})()
`;
}

// A request shaped like the gem's, but returning globalThis[helper](props,
// railsContext): the stream fixtures' helpers (bundles/stream-app.js).
function helperRequest({ helper, name, props, context }) {
  return `(function(componentName = ${railsJSON(name)}, props = undefined) {
  var railsContext = ${railsJSON(context)};
  var usedProps = typeof props === 'undefined' ? ${railsJSON(props)} : props;
  return ${helper}(usedProps, railsContext);
})()
`;
}

// crossRequest renders CrossPage (stream-app.js renderCrossStream) on the
// payload that producer (a function of payload-stream.js) streams from the
// bundle "payload-stream": three NDJSON lines, 50 ms apart, behind a promise
// when promised.
function crossRequest(producer, promised) {
  const props = {
    title: 'Payload <from> another bundle',
    items: [
      { name: 'Ada', text: 'Notes on the Analytical Engine & its “programs”.' },
      { name: 'Grace', text: 'Non-BMP: 🚀 and U+2028 \u2028 inside text.' },
      { name: 'Katherine', text: 'Trajectories, café, orbits.' },
    ],
  };
  const call = `${producer}(' + JSON.stringify(usedProps.items) + ', 50)`;
  return `(function(componentName = "CrossPage", props = undefined) {
  var railsContext = ${railsJSON(railsContext('/cross'))};
  var usedProps = typeof props === 'undefined' ? ${railsJSON(props)} : props;
  var payload = runOnOtherBundle("payload-stream", '${promised ? `Promise.resolve(${call})` : call}');
  return renderCrossStream(usedProps, payload, railsContext);
})()
`;
}

// Deterministic pseudo-random words (32-bit LCG, fixed seed).
function makeRng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

const WORDS = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ' +
  'incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud ' +
  'exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure ' +
  'reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint ' +
  'occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum'
).split(' ');

function sentence(rng, minChars) {
  const words = [];
  let len = 0;
  while (len < minChars) {
    const w = WORDS[rng() % WORDS.length];
    words.push(w);
    len += w.length + 1;
  }
  const s = words.join(' ');
  return `${s[0].toUpperCase()}${s.slice(1)}.`;
}

export function listItems(count) {
  const rng = makeRng(20240601);
  const items = [];
  for (let id = 1; id <= count; id += 1) {
    items.push({
      id,
      title: `Item ${id}: ${sentence(rng, 24).slice(0, -1)}`,
      body: sentence(rng, 200),
    });
  }
  return items;
}

const uuid = (n) => `5b0c6f7e-3a1d-4e2b-9c4f-${String(n).padStart(12, '0')}`;

// name -> request source. Order matters only for readability.
export function buildRequests() {
  return {
    'hello-world.js': renderingRequest({
      name: 'HelloWorld',
      domNodeId: `HelloWorld-react-component-${uuid(1)}`,
      props: { name: 'Rails' },
      trace: true,
      context: railsContext('/hello_world'),
    }),
    'small-page.js': renderingRequest({
      name: 'SmallPage',
      domNodeId: `SmallPage-react-component-${uuid(2)}`,
      props: {
        title: 'Small page',
        subtitle: 'A typical server-rendered page <with> "markup" & entities',
        links: [
          { href: '/', label: 'Home' },
          { href: '/posts', label: 'Posts' },
          { href: '/about', label: 'About us' },
        ],
        paragraphs: [
          'gorender renders React for Rails. This paragraph is the lead.',
          'Non-ASCII text survives the round trip: naïve café, Zürich, 日本語, emoji 🚀🎉.',
          'Line separators \u2028 and \u2029 are escaped by Rails JSON; <script>alert(1)</script> is escaped by React.',
        ],
        footer: '© 2024 gorender fixtures',
      },
      trace: false,
      context: railsContext('/pages/small', 'ref=nav&lang=en'),
    }),
    'list-page.js': renderingRequest({
      name: 'ListPage',
      domNodeId: `ListPage-react-component-${uuid(3)}`,
      props: { items: listItems(500) },
      trace: false,
      context: railsContext('/items', 'page=1&per=500'),
    }),
    'throws-error.js': renderingRequest({
      name: 'ThrowsError',
      domNodeId: `ThrowsError-react-component-${uuid(4)}`,
      props: { reason: 'fixture' },
      trace: true,
      context: railsContext('/broken'),
    }),
    'async-greeting.js': renderingRequest({
      name: 'AsyncGreeting',
      domNodeId: `AsyncGreeting-react-component-${uuid(5)}`,
      props: { name: 'Rails', greeting: 'Good evening' },
      trace: true,
      context: railsContext('/greeting'),
    }),
    // A trivial request for transport-cost benchmarks: just a string.
    'hello.js': "'<p>hello</p>'\n",
    ...buildSupportModulesRequests(),
  };
}

const NODE_APP_STATE = {
  session: { user: { name: 'Ada Lovelace' }, visits: ['/landing'] },
  cart: {
    items: [
      { sku: 'tea-01', name: 'Earl Grey <loose leaf>', qty: 2, priceCents: 1250 },
      { sku: 'mug-07', name: 'Mug "Zürich" & saucer', qty: 1, priceCents: 899 },
    ],
  },
};

// Requests for the support-modules bundles (RENDERER_SUPPORT_MODULES on):
// node-app-*.js, stream-app.js, async-app.js and async-props.js.
function buildSupportModulesRequests() {
  return {
    // NodeApp (bundles/node-app-esbuild.js and node-app-webpack.js), two routes.
    'node-app-home.js': renderingRequest({
      name: 'NodeApp',
      domNodeId: `NodeApp-react-component-${uuid(11)}`,
      props: { location: '/', initialState: NODE_APP_STATE },
      trace: false,
      context: railsContext('/'),
    }),
    'node-app-about.js': renderingRequest({
      name: 'NodeApp',
      domNodeId: `NodeApp-react-component-${uuid(12)}`,
      props: { location: '/about?ref=newsletter', initialState: NODE_APP_STATE },
      trace: true,
      context: railsContext('/about', 'ref=newsletter'),
    }),
    // bundles/stream-app.js helpers: a Node stream and a web ReadableStream.
    'stream-pipeable.js': helperRequest({
      helper: 'renderStream',
      name: 'StreamPage',
      props: {
        title: 'Streaming <pipeable> page',
        user: { name: 'Grace Hopper', bio: 'Compilers & COBOL — “debugging” since 1947.' },
        posts: [
          { id: 1, title: 'First post', body: 'Shell first, then the boundaries.' },
          { id: 2, title: 'Second post', body: 'Non-BMP: 🚀 and U+2028 \u2028 inside text.' },
        ],
        recommendations: ['streams', 'suspense', 'café'],
      },
      context: railsContext('/stream'),
    }),
    'stream-web.js': helperRequest({
      helper: 'renderWebStream',
      name: 'WebPage',
      props: { title: 'Web stream page', user: { name: 'Katherine Johnson', bio: 'Trajectories & orbits.' } },
      context: railsContext('/stream/web'),
    }),
    // bundles/stream-app.js rendering a payload that bundles/payload-stream.js
    // streams to it through runOnOtherBundle (bundle id "payload-stream"):
    // a Node stream, and a web ReadableStream behind a promise.
    'stream-cross.js': crossRequest('PayloadStream.lines', false),
    'stream-cross-web.js': crossRequest('PayloadStream.web', true),
    // bundles/async-app.js: AsyncLocalStorage across timers, Promise.all and for-await.
    'async-als.js': renderingRequest({
      name: 'AsyncAlsPage',
      domNodeId: `AsyncAlsPage-react-component-${uuid(13)}`,
      props: { requestId: 'req-7f3a9c', userId: 42 },
      trace: true,
      context: railsContext('/als'),
    }),
    // bundles/async-props.js: the incremental-render sequence of PROTOCOL.md §8.
    'async-props-initial.js': `(function(componentName = "AsyncPropsPage", props = undefined) {
  var railsContext = ${railsJSON(railsContext('/async-props', 'tab=comments'))};
  var usedProps = typeof props === 'undefined' ? ${railsJSON({ title: 'Async props & friends' })} : props;
  return AsyncPropsApp.render({
    title: usedProps.title,
    expected: ${railsJSON(['user', 'comments', 'recommendations'])},
    railsContext: railsContext,
  });
})()
`,
    'async-props-update-1.js': `AsyncPropsApp.deliver("user", ${railsJSON({ name: 'Ada <admin>', city: 'London' })})\n`,
    'async-props-update-2.js': `AsyncPropsApp.deliver("comments", ${railsJSON([
      { author: 'Grace', text: 'First! <b>bold</b>' },
      { author: 'Linus', text: 'Ünïcödé and 🚀 count as bytes, not characters.' },
    ])})\n`,
    'async-props-close.js': 'AsyncPropsApp.close()\n',
  };
}

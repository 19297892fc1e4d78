// Entry of bundles/stream-app.js (esbuild, Node CommonJS, RENDERER_SUPPORT_MODULES).
// Registers StreamPage with React on Rails (rendered by renderToString it shows
// its Suspense fallbacks) and exposes two global helpers for streaming tests:
//   renderStream(props, railsContext)    -> a Node stream.PassThrough fed by
//     renderToPipeableStream: the shell first, then one chunk per Suspense
//     boundary as its data resolves on setTimeout (50, 100 and 150 ms).
//   renderWebStream(props, railsContext) -> a web ReadableStream (the readable
//     side of a TransformStream) fed by renderToReadableStream: the shell, then
//     one Suspense boundary resolving after 50 ms.
//   renderListStream(props)              -> the ListPage of react-app.js streamed
//     by renderToPipeableStream, no Suspense: the same HTML as renderToString,
//     for comparing the streaming renderer's cost with it (bench/).
//   renderListString(props)              -> the same ListPage by renderToString.
//   renderCrossStream(props, payload)    -> a Node stream.PassThrough fed by
//     renderToPipeableStream of CrossPage, one Suspense boundary per NDJSON
//     line of payload: a stream (or a promise of one), Node or web, that
//     another bundle produces (payload-stream.js, through runOnOtherBundle),
//     each boundary flushed as its line arrives.
import ReactOnRails from 'react-on-rails';
import { Suspense, use } from 'react';
import { renderToPipeableStream, renderToReadableStream, renderToString } from 'react-dom/server';
import { PassThrough } from 'stream';
import ListPage from '../components/ListPage.jsx';

const delay = (ms, value) => new Promise((resolve) => setTimeout(resolve, ms, value));

function Profile({ resource }) {
  const user = use(resource);
  return (
    <section className="profile">
      <h2>{user.name}</h2>
      <p>{user.bio}</p>
    </section>
  );
}

function Feed({ resource }) {
  const posts = use(resource);
  return (
    <section className="feed">
      <ul>
        {posts.map((post) => (
          <li key={post.id}>
            <strong>{post.title}</strong> {post.body}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Recommendations({ resource }) {
  const items = use(resource);
  return (
    <aside className="recommendations">
      {items.map((item) => (
        <a key={item} href={`/r/${encodeURIComponent(item)}`}>
          {item}
        </a>
      ))}
    </aside>
  );
}

export function StreamPage({ title, resources }) {
  return (
    <div className="stream-page">
      <h1>{title}</h1>
      <Suspense fallback={<p className="loading">Loading profile…</p>}>
        <Profile resource={resources.profile} />
      </Suspense>
      <Suspense fallback={<p className="loading">Loading feed…</p>}>
        <Feed resource={resources.feed} />
      </Suspense>
      <Suspense fallback={<p className="loading">Loading recommendations…</p>}>
        <Recommendations resource={resources.recommendations} />
      </Suspense>
    </div>
  );
}

function WebPage({ title, resource }) {
  return (
    <div className="web-stream-page">
      <h1>{title}</h1>
      <Suspense fallback={<p className="loading">Loading profile…</p>}>
        <Profile resource={resource} />
      </Suspense>
    </div>
  );
}

// Data "fetched" per request: each resolves on its own timer.
const resourcesFor = (props) => ({
  profile: delay(50, props.user),
  feed: delay(100, props.posts),
  recommendations: delay(150, props.recommendations),
});

globalThis.renderStream = function renderStream(props) {
  const out = new PassThrough();
  const { pipe, abort } = renderToPipeableStream(<StreamPage title={props.title} resources={resourcesFor(props)} />, {
    onShellReady() {
      pipe(out);
    },
    onShellError(error) {
      out.destroy(error);
    },
    onError(error) {
      console.error('renderStream:', String(error));
    },
  });
  // A consumer that goes away stops the render (no-op once it is complete).
  out.on('close', () => abort());
  return out;
};

globalThis.renderWebStream = function renderWebStream(props) {
  const { readable, writable } = new TransformStream();
  renderToReadableStream(<WebPage title={props.title} resource={delay(50, props.user)} />, {
    onError(error) {
      console.error('renderWebStream:', String(error));
    },
  })
    .then((stream) => stream.pipeTo(writable))
    .catch((error) => writable.abort(error));
  return readable;
};

// payloadLines returns count promises, each fulfilled with the next NDJSON
// line of payload as it arrives, or rejected if the payload fails or ends
// first.
function payloadLines(payload, count) {
  const waiting = [];
  const lines = Array.from({ length: count }, () => new Promise((resolve, reject) => waiting.push({ resolve, reject })));
  lines.forEach((line) => line.catch(() => {}));
  let next = 0;
  let text = '';
  const decoder = new TextDecoder();
  const take = (chunk) => {
    text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    for (let nl = text.indexOf('\n'); nl >= 0 && next < count; nl = text.indexOf('\n')) {
      waiting[next++].resolve(JSON.parse(text.slice(0, nl)));
      text = text.slice(nl + 1);
    }
  };
  const fail = (error) => {
    while (next < count) waiting[next++].reject(error);
  };
  Promise.resolve(payload)
    .then((stream) => {
      if (typeof stream.getReader === 'function') {
        const reader = stream.getReader();
        const step = () =>
          reader.read().then(({ done, value }) => {
            if (done) return fail(new Error('the payload ended early'));
            take(value);
            return step();
          });
        return step();
      }
      stream.on('data', take);
      stream.on('end', () => fail(new Error('the payload ended early')));
      stream.on('error', fail);
      return undefined;
    })
    .catch(fail);
  return lines;
}

function PayloadItem({ line }) {
  const item = use(line);
  return (
    <li>
      <strong>{item.name}</strong> {item.text}
    </li>
  );
}

function CrossPage({ title, lines }) {
  return (
    <div className="cross-page">
      <h1>{title}</h1>
      <ul>
        {lines.map((line, i) => (
          <Suspense key={i} fallback={<li className="loading">Loading item {i + 1}…</li>}>
            <PayloadItem line={line} />
          </Suspense>
        ))}
      </ul>
    </div>
  );
}

globalThis.renderCrossStream = function renderCrossStream(props, payload) {
  const out = new PassThrough();
  const { pipe, abort } = renderToPipeableStream(<CrossPage title={props.title} lines={payloadLines(payload, props.items.length)} />, {
    onShellReady() {
      pipe(out);
    },
    onShellError(error) {
      out.destroy(error);
    },
    onError(error) {
      console.error('renderCrossStream:', String(error));
    },
  });
  out.on('close', () => abort());
  return out;
};

globalThis.renderListStream = function renderListStream(props) {
  const out = new PassThrough();
  const { pipe } = renderToPipeableStream(<ListPage {...props} />, {
    onShellReady() {
      pipe(out);
    },
    onShellError(error) {
      out.destroy(error);
    },
  });
  return out;
};

globalThis.renderListString = (props) => renderToString(<ListPage {...props} />);

// Rendered with serverRenderReactComponent (renderToString) the boundaries
// show their fallbacks: renderToString does not wait for Suspense.
ReactOnRails.register({
  StreamPage: (props) => <StreamPage title={props.title} resources={resourcesFor(props)} />,
});

// Entry of bundles/async-app.js (esbuild, Node CommonJS, target node20 with
// async generators and for-await left as they are: the renderer has to lower
// them itself at load).
//
// AsyncAlsPage is a React on Rails render-function returning a Promise of
// HTML. It runs in an AsyncLocalStorage context whose store carries the
// request id, loads its data with setTimeout, setImmediate, process.nextTick,
// queueMicrotask, Promise.all and an async generator consumed with for-await,
// and checks after every await that the store is still the request's. Two
// nested contexts run concurrently to show that they do not leak into each
// other or into the outer one. The page lists every check, sorted by label
// (their arrival order depends on the timers): "ok" or "LOST".
import ReactOnRails from 'react-on-rails';
import { AsyncLocalStorage } from 'async_hooks';
import { renderToString } from 'react-dom/server';

const als = new AsyncLocalStorage();

const delay = (ms, value) => new Promise((resolve) => setTimeout(resolve, ms, value));
const immediate = () => new Promise((resolve) => setImmediate(resolve));
const tick = () => new Promise((resolve) => process.nextTick(resolve));
const microtask = () => new Promise((resolve) => queueMicrotask(resolve));

function makeChecker(expected) {
  const checks = [];
  const check = (label) => {
    const store = als.getStore();
    checks.push({ label, ok: !!store && store.requestId === expected });
  };
  return { checks, check };
}

async function loadUser(id, check) {
  await delay(40);
  check('user:after-timeout');
  return { id, name: `User ${id}` };
}

async function loadOrders(check) {
  await immediate();
  check('orders:after-setImmediate');
  await delay(10);
  check('orders:after-timeout');
  return [
    { id: 'o-1', totalCents: 1250 },
    { id: 'o-2', totalCents: 399 },
  ];
}

// Three "pages" of notifications, each after a timer.
async function* notificationPages(check) {
  for (let page = 1; page <= 3; page += 1) {
    await delay(5 * page);
    check(`notifications:page-${page}`);
    yield [`n${page}a`, `n${page}b`];
  }
}

async function loadNotifications(check) {
  const all = [];
  for await (const page of notificationPages(check)) {
    all.push(...page);
  }
  check('notifications:after-for-await');
  return all;
}

function AlsPage({ requestId, user, orders, notifications, nested, checks }) {
  return (
    <div className="als-page" data-request-id={requestId}>
      <h1>Hello {user.name}</h1>
      <ul className="orders">
        {orders.map((o) => (
          <li key={o.id}>
            {o.id}: {o.totalCents}
          </li>
        ))}
      </ul>
      <p className="notifications">{notifications.join(', ')}</p>
      <p className="nested">{nested.join(' | ')}</p>
      <ol className="checks">
        {[...checks].sort((a, b) => (a.label < b.label ? -1 : 1)).map((c) => (
          <li key={c.label} className={c.ok ? 'ok' : 'lost'}>
            {c.label}: {c.ok ? 'ok' : 'LOST'}
          </li>
        ))}
      </ol>
    </div>
  );
}

async function renderPage(props) {
  const { requestId } = props;
  const { checks, check } = makeChecker(requestId);
  check('start');
  await tick();
  check('after-nextTick');
  await microtask();
  check('after-queueMicrotask');
  console.log(`AsyncAlsPage ${als.getStore().requestId}: loading`);
  const [user, orders, notifications] = await Promise.all([
    loadUser(props.userId, check),
    loadOrders(check),
    loadNotifications(check),
  ]);
  check('after-Promise.all');
  // Two nested contexts at once: the slower one starts first.
  const nested = await Promise.all(
    ['a', 'b'].map((suffix, i) =>
      als.run({ requestId: `${requestId}/${suffix}` }, async () => {
        await delay(i === 0 ? 20 : 5);
        return `${suffix}=${als.getStore().requestId}`;
      }),
    ),
  );
  check('after-nested');
  console.log(`AsyncAlsPage ${als.getStore().requestId}: rendering`);
  return renderToString(
    <AlsPage
      requestId={requestId}
      user={user}
      orders={orders}
      notifications={notifications}
      nested={nested}
      checks={checks}
    />,
  );
}

function AsyncAlsPage(props, railsContext) {
  return als.run({ requestId: props.requestId, locale: railsContext.i18nLocale }, () => renderPage(props));
}

ReactOnRails.register({ AsyncAlsPage });

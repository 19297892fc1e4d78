// The NodeApp fixture: react-router (StaticRouter), react-redux with an
// @reduxjs/toolkit store, react-helmet-async and a companion file read with fs.
import { Provider, useDispatch, useSelector } from 'react-redux';
import { Link, NavLink, Route, Routes, StaticRouter, useLocation, useParams } from 'react-router';
import { Helmet, HelmetProvider } from 'react-helmet-async';
import { renderToString } from 'react-dom/server';
import { addItem, createStore, selectCart, selectCartTotal, selectUser, selectVisits, visited } from './store.js';
import { chunksFor, readLoadableStats } from './loadableStats.js';

const formatCents = (cents) => `$${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

function Layout({ children, chunkNames }) {
  const user = useSelector(selectUser);
  const cart = useSelector(selectCart);
  const location = useLocation();
  return (
    <div className="node-app" data-path={location.pathname}>
      <header>
        <nav aria-label="Main">
          <NavLink to="/" end>Home</NavLink> <NavLink to="/about">About</NavLink>{' '}
          <Link to="/products/42?ref=header">Product 42</Link>
        </nav>
        <p className="greeting">Signed in as {user ? user.name : 'guest'} ({cart.length} items in cart)</p>
      </header>
      <main>{children}</main>
      <footer>
        <ul className="chunks">
          {chunkNames.map((name) => (
            <li key={name}>{name}</li>
          ))}
        </ul>
      </footer>
    </div>
  );
}

function Home() {
  const cart = useSelector(selectCart);
  const total = useSelector(selectCartTotal);
  return (
    <section className="home">
      <Helmet>
        <title>Home | gorender node app</title>
        <meta name="description" content="The home page of the NodeApp fixture" />
      </Helmet>
      <h1>Welcome &amp; enjoy</h1>
      <table>
        <tbody>
          {cart.map((item) => (
            <tr key={item.sku}>
              <td>{item.name}</td>
              <td>{item.qty}</td>
              <td>{formatCents(item.qty * item.priceCents)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="total">Total: {formatCents(total)}</p>
    </section>
  );
}

function About({ referrer }) {
  const visits = useSelector(selectVisits);
  return (
    <section className="about">
      <Helmet>
        <title>About us | gorender node app</title>
        <meta name="description" content="About the NodeApp fixture" />
      </Helmet>
      <h1>About</h1>
      <p>Rendered with react-router, react-redux and react-helmet-async.</p>
      <p className="referrer">Referred by: {referrer || 'nobody'}</p>
      <ol className="visits">
        {visits.map((v) => (
          <li key={v}>{v}</li>
        ))}
      </ol>
    </section>
  );
}

function Product() {
  const { id } = useParams();
  const dispatch = useDispatch();
  return (
    <section className="product">
      <Helmet>
        <title>{`Product ${id} | gorender node app`}</title>
      </Helmet>
      <h1>Product {id}</h1>
      <button type="button" onClick={() => dispatch(addItem({ sku: `p-${id}`, name: `Product ${id}`, qty: 1, priceCents: 100 }))}>
        Add to cart
      </button>
    </section>
  );
}

function NotFound() {
  return (
    <section className="not-found">
      <Helmet>
        <title>Not found | gorender node app</title>
      </Helmet>
      <h1>Not found</h1>
    </section>
  );
}

export function App({ location, store, helmetContext, chunkNames, referrer }) {
  return (
    <HelmetProvider context={helmetContext}>
      <Provider store={store}>
        <StaticRouter location={location}>
          <Layout chunkNames={chunkNames}>
            <Routes>
              <Route path="/" element={<Home />} />
              <Route path="/about" element={<About referrer={referrer} />} />
              <Route path="/products/:id" element={<Product />} />
              <Route path="*" element={<NotFound />} />
            </Routes>
          </Layout>
        </StaticRouter>
      </Provider>
    </HelmetProvider>
  );
}

const ROUTE_CHUNK_GROUPS = { '/': 'home', '/about': 'about' };

// React 19 hoists <title>, <meta> and <link> (which react-helmet-async 3
// renders natively on React 19) to the front of renderToString's output.
const HOISTED_HEAD = /^(?:<title>[^<]*<\/title>|<meta [^>]*\/>|<link [^>]*\/>)*/;

// A React on Rails render-function (two parameters): returns a server render
// hash whose renderedHtml is an object, for `react_component_hash` in Rails.
export default function NodeApp(props, railsContext) {
  const location = props.location || railsContext.location;
  const url = new URL(railsContext.href);
  const store = createStore(props.initialState);
  store.dispatch(visited(url.pathname));
  const stats = readLoadableStats();
  const pathname = location.split('?')[0];
  const { names, assets } = chunksFor(stats, ROUTE_CHUNK_GROUPS[pathname] || 'notFound');
  const helmetContext = {};
  const html = renderToString(
    <App
      location={location}
      store={store}
      helmetContext={helmetContext}
      chunkNames={names}
      referrer={url.searchParams.get('ref')}
    />,
  );
  // React 18 fills helmetContext.helmet; React 19 hoists the tags instead.
  let head;
  let componentHtml;
  if (helmetContext.helmet) {
    head = helmetContext.helmet.title.toString() + helmetContext.helmet.meta.toString();
    componentHtml = html;
  } else {
    head = HOISTED_HEAD.exec(html)[0];
    componentHtml = html.slice(head.length);
  }
  const title = (/<title>[^<]*<\/title>/.exec(head) || [''])[0];
  console.log(`NodeApp rendered ${pathname} with ${names.length} chunks`);
  return {
    renderedHtml: {
      componentHtml,
      title,
      meta: head.replace(title, ''),
      scriptTags: assets.map((src) => `<script async src="${src}"></script>`).join(''),
    },
  };
}

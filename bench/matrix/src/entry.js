// Entry of the rewrite-matrix bundles: a plain-script server bundle that
// renders two pages with react-dom/server's renderToString and
// renderToStaticMarkup, built once per (React version × mode × minifier).
import '../../../tests/testdata/js/src/polyfills.js';
import * as React from 'react';
import { renderToStaticMarkup, renderToString } from 'react-dom/server';

const h = React.createElement;

function ListPage({ items }) {
  return h('section', { className: 'list-page' },
    h('h2', null, items.length, ' items'),
    h('ul', { className: 'items' }, items.map((item) =>
      h('li', { key: item.id, id: `item-${item.id}`, className: 'list-item', 'data-id': item.id },
        h('h4', { className: 'item-title' }, item.title),
        h('p', { className: 'item-body' }, item.body)))));
}

function Fallback() {
  return h('p', { className: 'loading' }, 'Loading…');
}

function Suspends() {
  throw new Promise(() => {});
}

function SmallPage({ title, links, paragraphs, withSuspense }) {
  return h('main', { className: 'small-page', style: { color: 'red', marginTop: 4 } },
    h('h1', null, title),
    h('nav', null, links.map((l) => h('a', { key: l.href, href: l.href }, l.label))),
    paragraphs.map((p, i) => h('p', { key: i, dangerouslySetInnerHTML: i === 2 ? { __html: p } : undefined }, i === 2 ? undefined : p)),
    withSuspense ? h(React.Suspense, { fallback: h(Fallback) }, h(Suspends)) : null,
    h('input', { type: 'text', defaultValue: 'x < y & "z"', readOnly: true }),
    h('footer', null, '© 2024 – ', h('b', null, React.version.split('.')[0])));
}

const pages = { ListPage, SmallPage };

globalThis.renderPage = function renderPage(name, props, staticMarkup) {
  const render = staticMarkup ? renderToStaticMarkup : renderToString;
  return render(h(pages[name], props));
};

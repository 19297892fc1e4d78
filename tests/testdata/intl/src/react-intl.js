// react-intl: an IntlProvider page rendered to HTML, and the imperative API.
// The plain-script polyfills of the main fixture first: react-dom/server needs
// TextEncoder and MessageChannel while it loads.
import '../../js/src/polyfills.js';
import * as React from 'react';
import { renderToString } from 'react-dom/server';
import {
  IntlProvider, FormattedMessage, FormattedNumber, FormattedDate, FormattedTime, FormattedRelativeTime,
  FormattedList, FormattedDisplayName, FormattedPlural, createIntl, createIntlCache,
} from 'react-intl';
import { install, T } from './matrix.js';

const h = React.createElement;
const messages = {
  greeting: 'Hello {name}, you have {count, plural, =0 {no messages} one {# message} other {# messages}}.',
  place: 'You finished {pos, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}.',
  price: 'Total: {total, number, ::currency/EUR}',
  when: 'Sent {sent, date, long} at {sent, time, short}',
  gender: '{g, select, female {She} male {He} other {They}} replied.',
};
const cache = createIntlCache();

function Page() {
  return h('div', null,
    h('p', null, h(FormattedMessage, { id: 'greeting', values: { name: 'Ana', count: 3 } })),
    h('p', null, h(FormattedMessage, { id: 'greeting', values: { name: 'Bo', count: 1 } })),
    h('p', null, h(FormattedMessage, { id: 'place', values: { pos: 22 } })),
    h('p', null, h(FormattedMessage, { id: 'price', values: { total: 1234.5 } })),
    h('p', null, h(FormattedMessage, { id: 'when', values: { sent: T } })),
    h('p', null, h(FormattedNumber, { value: 0.256, style: 'percent' })),
    h('p', null, h(FormattedNumber, { value: 9876543.21, style: 'currency', currency: 'USD' })),
    h('p', null, h(FormattedNumber, { value: 1234567, notation: 'compact' })),
    h('p', null, h(FormattedDate, { value: T, year: 'numeric', month: 'long', day: '2-digit', weekday: 'long' })),
    h('p', null, h(FormattedTime, { value: T })),
    h('p', null, h(FormattedRelativeTime, { value: -3, unit: 'day' })),
    h('p', null, h(FormattedList, { type: 'conjunction', value: ['red', 'green', 'blue'] })),
    h('p', null, h(FormattedDisplayName, { type: 'region', value: 'JP' })),
    h('p', null, h(FormattedPlural, { value: 2, one: 'one item', other: 'many items' })));
}

install('react-intl', {
  page: (L) => renderToString(h(IntlProvider, { locale: L, messages, timeZone: 'UTC', defaultLocale: 'en' }, h(Page))),
  'intl.formatMessage': (L) => createIntl({ locale: L, messages, timeZone: 'UTC' }, cache).formatMessage({ id: 'gender' }, { g: 'female' }),
  'intl.formatNumber': (L) => createIntl({ locale: L, messages }, cache).formatNumber(-42.5, { style: 'unit', unit: 'kilogram', unitDisplay: 'long' }),
  'intl.formatDateTimeRange': (L) => createIntl({ locale: L, messages, timeZone: 'Europe/Madrid' }, cache).formatDateTimeRange(T, T + 3 * 86400000, { dateStyle: 'medium' }),
  'intl.formatRelativeTime': (L) => createIntl({ locale: L, messages }, cache).formatRelativeTime(1, 'month', { numeric: 'auto' }),
});

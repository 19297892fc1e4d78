// i18next: interpolation with its Intl formatters and Intl plural rules.
import i18next from 'i18next';
import { install, T } from './matrix.js';

const resources = {
  translation: {
    price: 'Price: {{val, currency(EUR)}}',
    amount: 'Amount: {{val, number(minimumFractionDigits: 2)}}',
    when: 'On {{val, datetime}}',
    whenLong: 'On {{val, datetime(dateStyle: full; timeZone: UTC)}}',
    ago: 'Updated {{val, relativetime(quarter)}}',
    list: 'Colors: {{val, list}}',
    item_zero: 'no items', item_one: '{{count}} item', item_two: '{{count}} items (two)', item_few: '{{count}} items (few)',
    item_many: '{{count}} items (many)', item_other: '{{count}} items',
    place_ordinal_one: '{{count}}st', place_ordinal_two: '{{count}}nd', place_ordinal_few: '{{count}}rd', place_ordinal_other: '{{count}}th',
  },
};

const instances = new Map();
function t(L) {
  let i = instances.get(L);
  if (!i) {
    i = i18next.createInstance();
    i.init({ lng: L, fallbackLng: false, initAsync: false, resources: { [L]: resources }, interpolation: { escapeValue: false } });
    instances.set(L, i);
  }
  return i.t.bind(i);
}

install('i18next', {
  currency: (L) => t(L)('price', { val: 1234.5 }),
  number: (L) => t(L)('amount', { val: 1234567 }),
  datetime: (L) => t(L)('when', { val: new Date(T), formatParams: { val: { timeZone: 'UTC' } } }),
  'datetime.full': (L) => t(L)('whenLong', { val: new Date(T) }),
  relativetime: (L) => t(L)('ago', { val: -2 }),
  list: (L) => t(L)('list', { val: ['red', 'green', 'blue'] }),
  plurals: (L) => [0, 1, 2, 3, 5, 11, 22, 1.5].map((count) => t(L)('item', { count })).join(' / '),
  ordinals: (L) => [1, 2, 3, 4, 11, 21].map((count) => t(L)('place', { count, ordinal: true })).join(' / '),
});

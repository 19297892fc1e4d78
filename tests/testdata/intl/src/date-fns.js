// date-fns: its Intl-based functions.
import { intlFormat, intlFormatDistance } from 'date-fns';
import { install, T } from './matrix.js';

const d = new Date(T);
install('date-fns', {
  intlFormat: (L) => intlFormat(d, { timeZone: 'UTC' }, { locale: L }),
  'intlFormat.long': (L) => intlFormat(d, { year: 'numeric', month: 'long', day: 'numeric', weekday: 'long', hour: 'numeric', timeZone: 'Pacific/Auckland' }, { locale: L }),
  'intlFormatDistance.hours': (L) => intlFormatDistance(new Date(T - 3 * 3600e3), d, { locale: L }),
  'intlFormatDistance.days': (L) => intlFormatDistance(new Date(T + 2 * 86400e3), d, { locale: L }),
  'intlFormatDistance.years': (L) => intlFormatDistance(new Date(T - 400 * 86400e3), d, { locale: L, numeric: 'always' }),
  'intlFormatDistance.unit': (L) => intlFormatDistance(new Date(T - 45e3), d, { locale: L, unit: 'second', style: 'short' }),
});

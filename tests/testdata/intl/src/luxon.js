// luxon: formatting and relative times (luxon uses Intl even for en-US).
import { DateTime, Duration, Info, Interval } from 'luxon';
import { install, T } from './matrix.js';

const dt = (L, zone = 'America/Chicago') => DateTime.fromMillis(T, { zone, locale: L });

install('luxon', {
  'DATETIME_FULL': (L) => dt(L).toLocaleString(DateTime.DATETIME_FULL),
  'DATE_HUGE': (L) => dt(L).toLocaleString(DateTime.DATE_HUGE),
  'TIME_SIMPLE': (L) => dt(L, 'Asia/Tokyo').toLocaleString(DateTime.TIME_SIMPLE),
  'DATETIME_SHORT_WITH_SECONDS': (L) => dt(L, 'UTC').toLocaleString(DateTime.DATETIME_SHORT_WITH_SECONDS),
  'toFormat': (L) => dt(L, 'Europe/London').toFormat("cccc d LLLL yyyy HH:mm ZZZZ"),
  'toFormat.macro': (L) => dt(L, 'Europe/Berlin').toFormat('DDDD t'),
  'toRelative': (L) => dt(L).toRelative({ base: dt(L).plus({ days: 3, hours: 2 }) }),
  'toRelativeCalendar': (L) => dt(L).toRelativeCalendar({ base: dt(L).plus({ days: 1 }) }),
  'offsetNameLong': (L) => dt(L, 'Australia/Adelaide').offsetNameLong,
  'offsetNameShort': (L) => dt(L, 'America/Denver').offsetNameShort,
  'Info.months': (L) => Info.months('long', { locale: L }).join(),
  'Info.weekdays': (L) => Info.weekdays('short', { locale: L }).join(),
  'Info.meridiems': (L) => Info.meridiems({ locale: L }).join(),
  'Duration.toHuman': (L) => Duration.fromObject({ hours: 2, minutes: 5 }, { locale: L }).toHuman(),
  'Interval.toLocaleString': (L) => Interval.fromDateTimes(dt(L, 'UTC'), dt(L, 'UTC').plus({ days: 4 })).toLocaleString(DateTime.DATE_MED),
  'setZone.hour': (L) => dt(L).setZone('Asia/Kathmandu').toLocaleString({ hour: 'numeric', minute: 'numeric', timeZoneName: 'short' }),
});

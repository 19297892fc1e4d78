// What does not depend on a requested locale: the process's defaults
// (en-US and UTC where the goldens are recorded: LANG=C.UTF-8, TZ unset with
// /etc/localtime UTC, as CI runs) and the supported values.
import { install, T } from './matrix.js';

const d = new Date(T);
install('env', {
  'default.locale': () => new Intl.NumberFormat().resolvedOptions().locale,
  'default.timeZone': () => new Intl.DateTimeFormat().resolvedOptions().timeZone,
  'default.dtf': () => JSON.stringify(new Intl.DateTimeFormat().resolvedOptions()),
  'default.number': () => (1234567.891).toLocaleString(),
  'default.date': () => d.toLocaleString(),
  'default.dateString': () => d.toLocaleDateString(),
  'default.timeString': () => d.toLocaleTimeString(),
  'default.localeCompare': () => ['Zoë', 'zebra', 'äpple', 'Apple', 'banana', 'cherry'].sort((a, b) => a.localeCompare(b)).join(),
  'supported.timeZone': () => Intl.supportedValuesOf('timeZone').join(),
  'supported.currency': () => Intl.supportedValuesOf('currency').join(),
  'supported.unit': () => Intl.supportedValuesOf('unit').join(),
  'supported.numberingSystem': () => Intl.supportedValuesOf('numberingSystem').join(),
  'timeZone.canonical': () => ['utc', 'Etc/GMT', 'asia/kolkata', 'US/Pacific', 'Europe/Kyiv', 'America/Nuuk', 'EST', 'Etc/GMT+5']
    .map((z) => new Intl.DateTimeFormat('en', { timeZone: z }).resolvedOptions().timeZone).join(),
  'timeZone.invalid': () => { try { new Intl.DateTimeFormat('en', { timeZone: 'Mars/Olympus' }); return 'no error'; } catch (e) { return e.constructor.name; } },
  'timeZone.dst': () => ['2024-03-10T06:59:59Z', '2024-03-10T07:00:00Z', '2024-11-03T05:59:59Z', '2024-11-03T06:00:00Z']
    .map((t) => new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeStyle: 'long' }).format(new Date(t))).join(),
  'timeZone.history': () => new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Moscow', dateStyle: 'short', timeStyle: 'long' }).format(new Date(Date.UTC(2012, 5, 1))),
  'intl.keys': () => Object.getOwnPropertyNames(Intl).sort().join(),
  'intl.tag': () => Object.prototype.toString.call(Intl),
});

// The Go functions Intl needs, handed over by install() (src/index.js), and
// what the patched polyfill code calls (see the patches in build.mjs). Until
// install() runs nothing calls them: the polyfills only define classes when
// they load.
//
// host: localeData(kind, file) -> JSON text; localeKeys(kind, file, path)
// -> a table's keys joined by "\n"; localeEntry(kind, file, path, key) ->
// JSON text of an entry; zoneOffset(zone, ms) ->
// [offset ms, in DST] or null for a zone Go does not know;
// defaultTimeZone(), defaultLocale() (from the process's TZ and LANG, as
// ICU takes them); collate(locale, sensitivity, caseFirst, numeric,
// ignorePunctuation, a, b) -> -1/0/1.
import generated from './generated.json';

export let host = null;

export function setHost(h) {
  host = h;
}

// zoneOffset is the polyfill's getApplicableZoneData (the offset of a zone
// at a time, and whether it is daylight saving time) on Go's time zone
// database.
export function zoneOffset(t, timeZone) {
  const r = host.zoneOffset(timeZone, t);
  return r === null ? [0, false] : [r[0], r[1]];
}

// canonicalTimeZone resolves a DateTimeFormat's timeZone option as V8 does:
// ICU's canonical name of an IANA zone or link, in any case; "UTC" for UTC
// and GMT; undefined is the process's zone (UTC when that is unknown). It
// replaces the polyfill's own IANA table (see the patches in build.mjs).
let zoneNames = null;
export function canonicalTimeZone(tz) {
  if (zoneNames === null) {
    zoneNames = new Map();
    for (const [alias, canonical] of Object.entries(generated.zones)) zoneNames.set(alias.toUpperCase(), canonical);
  }
  if (tz === undefined) {
    const d = zoneNames.get(String(host.defaultTimeZone()).toUpperCase());
    return d === undefined ? 'UTC' : d;
  }
  const name = String(tz);
  const canonical = zoneNames.get(name.toUpperCase());
  if (canonical === undefined) throw new RangeError('Invalid time zone specified: ' + name);
  return canonical;
}

// canonicalZoneList is Intl.supportedValuesOf('timeZone') as V8 answers:
// ICU's canonical zones without the Etc/ ones, sorted.
export function canonicalZoneList() {
  const out = new Set();
  for (const canonical of Object.values(generated.zones)) {
    if (!canonical.startsWith('Etc/') && canonical !== 'UTC') out.add(canonical);
  }
  return [...out].sort();
}

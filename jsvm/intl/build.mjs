// Builds gorender's Intl for the pure-Go engines (run by build.sh):
//
//   dist/locale-data.bin  the CLDR locale data of every FormatJS polyfill, for
//                         every locale FormatJS ships, deduplicated and
//                         compressed; the Go package reads one locale at a time
//                         (format: see the comment of pack() below, and
//                         jsvm/intl/data.go, which reads it).
//   dist/intl.js          src/index.js and the polyfills' code, bundled: one
//                         script whose completion value is install(host) (see
//                         src/index.js). It carries no locale data, only the
//                         index of which tags each polyfill knows.
//
// Deterministic: a rerun on the same package versions changes no bytes.
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';
import vm from 'node:vm';
import zlib from 'node:zlib';
import crypto from 'node:crypto';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = (name) => path.join(here, 'node_modules', name);
const dist = path.join(here, 'dist');
fs.mkdirSync(dist, { recursive: true });

// The polyfills that take locale data, by the constructor they install. split
// is the depth at which a locale's data is cut into pieces that are stored
// once however many locales share them (en-AU and en-NZ share most of en-001).
const kinds0 = [
  { kind: 'pluralrules', pkg: '@formatjs/intl-pluralrules', ctor: 'PluralRules', split: 1 },
  { kind: 'numberformat', pkg: '@formatjs/intl-numberformat', ctor: 'NumberFormat', split: 1 },
  { kind: 'datetimeformat', pkg: '@formatjs/intl-datetimeformat', ctor: 'DateTimeFormat', split: 1 },
  { kind: 'relativetimeformat', pkg: '@formatjs/intl-relativetimeformat', ctor: 'RelativeTimeFormat', split: 1 },
  { kind: 'listformat', pkg: '@formatjs/intl-listformat', ctor: 'ListFormat', split: 1 },
  { kind: 'displaynames', pkg: '@formatjs/intl-displaynames', ctor: 'DisplayNames', split: 3 },
];

const kinds = process.env.KINDS ? kinds0.filter((k) => process.env.KINDS.split(',').includes(k.kind)) : kinds0;

// ---- Locale data ------------------------------------------------------------

// Load every polyfill and every locale file into a fresh V8 context without
// Intl, the way a page would, recording for each locale file the data it
// passes to __addLocaleData and, for each tag the polyfill then knows, which
// file's data it resolves to. Files load in sorted order, as the polyfills'
// own "add all locales" would, so tags that several files could provide (a
// file's fallbacks, default-content tags) resolve to the same file as there.
async function extractLocaleData() {
  const entry = kinds.map((k) => `import '${k.pkg}/polyfill-force.js';`).join('\n');
  const out = await esbuild.build({
    stdin: { contents: entry, resolveDir: here },
    bundle: true, write: false, format: 'iife', logLevel: 'warning',
  });
  const ctx = vm.createContext({});
  vm.runInContext('delete globalThis.Intl;', ctx);
  vm.runInContext(out.outputFiles[0].text, ctx);
  const result = {};
  for (const k of kinds) {
    const C = vm.runInContext(`Intl.${k.ctor}`, ctx);
    const add = C.__addLocaleData;
    let captured = null;
    C.__addLocaleData = function (...data) {
      captured = data;
      return add.apply(this, data);
    };
    const dir = path.join(pkgDir(k.pkg), 'locale-data');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3)).sort();
    const data = new Map();
    const owner = new Map();
    for (const file of files) {
      const before = new Map(Object.entries(C.localeData));
      captured = null;
      vm.runInContext(fs.readFileSync(path.join(dir, file + '.js'), 'utf8'), ctx, { filename: file });
      if (!captured || captured.length !== 1 || captured[0].locale !== file) {
        throw new Error(`${k.pkg}/locale-data/${file}.js did not add exactly its own locale`);
      }
      // A few files register a locale without data (DisplayNames of "aa"):
      // such a locale is left out, so it resolves like one FormatJS lacks.
      if (captured[0].data === undefined) continue;
      data.set(file, serialize(k.kind === 'datetimeformat' ? withAtTime(captured[0].data, file) : captured[0].data));
      for (const [tag, v] of Object.entries(C.localeData)) {
        if (before.get(tag) !== v) owner.set(tag, file);
      }
    }
    for (const [tag, file] of owner) {
      if (C.localeData[tag] === undefined) owner.delete(tag);
      else if (!data.has(file)) throw new Error(`${k.kind}: ${tag} resolves to ${file}, which has no data`);
    }
    result[k.kind] = { files: [...data.keys()], data, owner };
  }
  // What the polyfills can do, probed once here with every locale loaded
  // (their supportedValuesOf probes by constructing formatters: seconds per
  // call on goja).
  result.calendars = JSON.parse(vm.runInContext(`JSON.stringify(['calendar', 'collation'].map((k) => {
    try { return Intl.supportedValuesOf(k); } catch (e) { return []; }
  }))`, ctx));
  return result;
}

// supportedValues is Intl.supportedValuesOf as gorender answers it. The
// currencies, units and numbering systems are ICU's lists, taken from the
// Node that runs the build (build.sh requires the Node whose ICU the
// goldens record): the polyfills format every one of them. The calendars
// are the ones the DateTimeFormat polyfill formats; collations are none
// (Intl.Collator takes no collation type: docs/intl.md).
function supportedValues(extracted) {
  return {
    calendar: extracted.calendars[0],
    collation: [],
    currency: Intl.supportedValuesOf('currency'),
    numberingSystem: Intl.supportedValuesOf('numberingSystem'),
    unit: Intl.supportedValuesOf('unit'),
  };
}

// withAtTime returns a locale's DateTimeFormat data with CLDR's "atTime"
// date-time connectors ("{1} 'at' {0}": March 5, 2024 at 2:07 PM), which ICU
// uses where FormatJS uses the plain ones ("{1}, {0}"): for dateStyle with
// timeStyle, and in the date-and-time combinations FormatJS precomputes
// ("<date skeleton or pattern>, <time skeleton or pattern>"), by the width ICU's pattern generator
// gives the date (MMMM with a weekday is full, MMMM long, MMM medium, else
// short). From cldr-dates-full, the CLDR release of the polyfills' data.
const atTimeMisses = [];
function withAtTime(data, locale) {
  data = withHourCycle(data, locale);
  const file = path.join(pkgDir('cldr-dates-full'), 'main', locale, 'ca-gregorian.json');
  if (!fs.existsSync(file)) return data;
  const g = JSON.parse(fs.readFileSync(file, 'utf8')).main[locale].dates.calendars.gregorian;
  const at = g['dateTimeFormats-atTime'] && g['dateTimeFormats-atTime'].standard;
  if (!at) return data;
  const std = data.dateTimeFormat;
  const out = { ...data, dateTimeFormat: { ...std } };
  for (const w of ['full', 'long', 'medium', 'short']) if (typeof at[w] === 'string') out.dateTimeFormat[w] = at[w];
  const unquoted = (p) => p.replace(/'[^']*'/g, '');
  const width = (p) => {
    const u = unquoted(p);
    const months = (u.match(/[ML]+/) || [''])[0].length;
    if (months >= 4) return /[Ec]/.test(u) ? 'full' : 'long';
    return months === 3 ? 'medium' : 'short';
  };
  const join = (connector, date, time) => connector.replace('{1}', () => date).replace('{0}', () => time);
  // FormatJS keys a combination by the connector itself ("yMMMd, Hm",
  // "y年M月d日 H時mm分"): split it where the rest is a time skeleton or a
  // timeStyle pattern (with an hour) and the first part has no time field.
  const separators = [...new Set(Object.values(std).map((c) => c.slice(c.indexOf('{1}') + 3, c.indexOf('{0}'))))]
    .filter((sep) => sep && !/[{}]/.test(sep));
  const split = (list, key, value) => {
    const patterns = new Set([...Object.values(data.timeFormat), ...Object.values(list)]);
    for (const sep of separators) {
      for (let i = key.indexOf(sep); i > 0; i = key.indexOf(sep, i + 1)) {
        const dateKey = key.slice(0, i);
        const timeKey = key.slice(i + sep.length);
        const time = list[timeKey] || (patterns.has(timeKey) ? timeKey : null);
        if (time === null || !/[hHkK]/.test(unquoted(timeKey)) || /[yYuUrGMLdDEecQqwW]/.test(unquoted(timeKey)) ||
          /[hHkKmsaBb]/.test(unquoted(dateKey))) continue;
        const date = list[dateKey] || dateKey;
        if (Object.values(std).some((c) => join(c, date, time) === value)) return { dateKey, date, time };
      }
    }
    return null;
  };
  const formats = {};
  for (const [cal, list] of Object.entries(data.formats)) {
    formats[cal] = {};
    for (const [key, value] of Object.entries(list)) {
      formats[cal][key] = value;
      if (cal !== 'gregory' || !separators.some((sep) => key.includes(sep))) continue;
      const parts = split(list, key, value);
      if (!parts) {
        atTimeMisses.push(locale + ' ' + key);
        continue;
      }
      formats[cal][key] = join(out.dateTimeFormat[width(parts.dateKey)], parts.date, parts.time);
    }
  }
  // ICU matches options against CLDR's skeletons; FormatJS also lists the
  // date styles' patterns (and their combinations) as formats, which tie
  // with the skeletons that ask for the same fields and, listed first, won
  // (ja: 2024年3月5日 where ICU's yMd is 2024/3/5). Skeletons first.
  const isSkeleton = (key) => /^[A-Za-z]+$/.test(key) || separators.some((sep) => {
    const i = key.indexOf(sep);
    return i > 0 && /^[A-Za-z]+$/.test(key.slice(0, i)) && /^[A-Za-z]+$/.test(key.slice(i + sep.length));
  });
  for (const cal of Object.keys(formats)) {
    const entries = Object.entries(formats[cal]);
    formats[cal] = Object.fromEntries([...entries.filter(([k]) => isSkeleton(k)), ...entries.filter(([k]) => !isSkeleton(k))]);
  }
  out.formats = formats;
  return out;
}

// withHourCycle fills the hour cycle FormatJS leaves empty for 71 locales
// (zh-Hant among them, which then writes 14:07 where ICU writes 下午2:07):
// CLDR's preferred hour format of the locale's region (likely subtags).
let cldrCore = null;
function withHourCycle(data, locale) {
  if (data.hourCycle) return data;
  cldrCore = cldrCore || {
    timeData: JSON.parse(fs.readFileSync(path.join(pkgDir('cldr-core'), 'supplemental', 'timeData.json'), 'utf8')).supplemental.timeData,
    likely: JSON.parse(fs.readFileSync(path.join(pkgDir('cldr-core'), 'supplemental', 'likelySubtags.json'), 'utf8')).supplemental.likelySubtags,
  };
  const parts = locale.split('-');
  let region = parts.find((p, i) => i > 0 && /^([A-Z]{2}|[0-9]{3})$/.test(p));
  if (!region) {
    const full = cldrCore.likely[locale] || cldrCore.likely[parts[0]] || '';
    region = full.split('-').find((p, i) => i > 0 && /^([A-Z]{2}|[0-9]{3})$/.test(p));
  }
  const t = cldrCore.timeData[region] || cldrCore.timeData['001'];
  const cycle = { h: 'h12', H: 'h23', K: 'h11', k: 'h24' }[t._preferred] || 'h23';
  return { ...data, hourCycle: cycle };
}

// serialize turns a locale's data into JSON text. Plural rules carry a
// function; it travels as its source in {"$fn": "..."} and the runtime turns
// it back into a function (src/index.js).
function serialize(data) {
  return JSON.stringify(data, (key, v) => (typeof v === 'function' ? { $fn: v.toString() } : v));
}

// pack writes the locale data archive. Layout (all integers little-endian
// uint32):
//
//   "GORENDER-INTL-1\n"
//   index length, index (raw DEFLATE of JSON):
//     { "pieces": [[block, offset, length], ...],
//       "blocks": [[offset, length], ...],      offsets after the index
//       "entries": { kind: { file: template } } }
//   blocks (each raw DEFLATE)
//
// A template is the JSON text of one locale's data in which each piece is
// replaced by "\u0001<piece number>\u0002" (JSON never contains raw control
// characters); a piece is the JSON text of a subtree, stored once. Pieces are
// laid out in order of first use, so a locale's new pieces sit together, and
// cut into blocks of about blockSize bytes, each compressed on its own: a
// locale costs the blocks that hold its pieces, never the whole archive.
function pack(extracted, blockSize) {
  const pieceIds = new Map();
  const pieces = [];
  const piece = (text) => {
    const h = crypto.createHash('sha256').update(text).digest('hex');
    let id = pieceIds.get(h);
    if (id === undefined) {
      id = pieces.length;
      pieceIds.set(h, id);
      pieces.push(text);
    }
    return '\u0001' + id + '\u0002';
  };
  const template = (v, depth) => {
    if (depth === 0 || v === null || typeof v !== 'object' || Array.isArray(v)) return piece(JSON.stringify(v));
    return '{' + Object.keys(v).map((k) => JSON.stringify(k) + ':' + template(v[k], depth - 1)).join(',') + '}';
  };
  const entries = {};
  for (const k of kinds) {
    const { files, data } = extracted[k.kind];
    entries[k.kind] = {};
    for (const file of files) entries[k.kind][file] = template(JSON.parse(data.get(file)), k.split);
  }
  const blocks = [];
  const pieceTable = [];
  let cur = [];
  let curLen = 0;
  const flush = () => {
    if (cur.length === 0) return;
    blocks.push(zlib.deflateRawSync(Buffer.from(cur.join(''), 'utf8'), { level: 9 }));
    cur = [];
    curLen = 0;
  };
  for (const text of pieces) {
    const bytes = Buffer.byteLength(text, 'utf8');
    pieceTable.push([blocks.length, curLen, bytes]);
    cur.push(text);
    curLen += bytes;
    if (curLen >= blockSize) flush();
  }
  flush();
  let off = 0;
  const blockTable = blocks.map((b) => {
    const e = [off, b.length];
    off += b.length;
    return e;
  });
  const index = zlib.deflateRawSync(Buffer.from(JSON.stringify({ pieces: pieceTable, blocks: blockTable, entries }), 'utf8'), { level: 9 });
  const head = Buffer.alloc(4);
  head.writeUInt32LE(index.length);
  return Buffer.concat([Buffer.from('GORENDER-INTL-1\n'), head, index, ...blocks]);
}

// localeIndex is what the runtime needs to resolve tags without loading
// data: per kind, every tag the polyfill would know with all locales loaded,
// and the file that provides it where that is not the tag itself.
function localeIndex(extracted) {
  const index = {};
  for (const k of kinds) {
    const { owner } = extracted[k.kind];
    const tags = [...owner.keys()].sort();
    const other = {};
    for (const tag of tags) if (owner.get(tag) !== tag) other[tag] = owner.get(tag);
    index[k.kind] = { tags: tags.join(' '), owner: other };
  }
  return index;
}

// zoneAliases maps every time zone name CLDR knows (IANA zones and links) to
// ICU's canonical name, the first of CLDR's aliases (Asia/Kolkata is
// Asia/Calcutta), and UTC and GMT to "UTC", as V8 resolves them.
function zoneAliases() {
  const tz = JSON.parse(fs.readFileSync(path.join(pkgDir('cldr-bcp47'), 'bcp47', 'timezone.json'), 'utf8')).keyword.u.tz;
  const out = {};
  for (const [key, e] of Object.entries(tz)) {
    if (key.startsWith('_') || !e._alias) continue;
    const names = e._alias.split(' ');
    let canonical = names[0];
    if (canonical === 'Etc/UTC' || canonical === 'Etc/GMT') canonical = 'UTC';
    for (const n of names) out[n] = canonical;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// Source patches: where the polyfills read their own IANA table, read Go's
// time zone database and ICU's names instead (src/host.js). Each patch must
// match exactly once, so an upgrade that moves the code fails the build.
const patches = [
  {
    // V8's "best fit" locale matching answers as "lookup" does (checked
    // against Node for each constructor); FormatJS's best fit computes CLDR
    // language distances to every available locale on every construction.
    file: /intl-localematcher[\\/]index\.js$/,
    edits: [
      {
        from: '\telse r = BestFitMatcher(localeArray(availableLocales, true), requestedLocales, getDefaultLocale);',
        to: '\telse r = LookupMatcher(availableLocales, requestedLocales, getDefaultLocale);',
      },
      {
        // The matcher looks tags up in a Set of the available locales: it
        // made an array of a polyfill's Set (1,200 tags), and a Set of that
        // array, for each polyfill in each runtime (~0.3 MB each on goja).
        // A polyfill's Set is used as it is.
        from: '\tif (matcher === "lookup") r = LookupMatcher(localeArray(availableLocales, false), requestedLocales, getDefaultLocale);',
        to: '\tif (matcher === "lookup") r = LookupMatcher(availableLocales, requestedLocales, getDefaultLocale);',
      },
      {
        from: '\tlet availableSet = availableLocalesSetCache.get(availableLocales);\n',
        to: '\tlet availableSet = availableLocales instanceof Set ? availableLocales : availableLocalesSetCache.get(availableLocales);\n',
      },
    ],
  },
  {
    file: /intl-datetimeformat[\\/]polyfill-force\.js$/,
    host: true,
    edits: [
      {
        from: 'function getApplicableZoneData(t, timeZone, tzData) {\n\tif (IsTimeZoneOffsetString(timeZone)) return [ParseTimeZoneOffsetString(timeZone), false];\n',
        to: 'function getApplicableZoneData(t, timeZone, tzData) {\n\tif (IsTimeZoneOffsetString(timeZone)) return [ParseTimeZoneOffsetString(timeZone), false];\n\treturn __gorender.zoneOffset(t, timeZone);\n',
      },
      {
        from: '\tif (timeZone !== void 0) {\n\t\ttimeZone = String(timeZone);\n\t\tif (!IsValidTimeZoneName(timeZone, {\n\t\t\tzoneNamesFromData: Object.keys(tzData),\n\t\t\tuppercaseLinks\n\t\t})) throw new RangeError("Invalid timeZoneName");\n\t\ttimeZone = CanonicalizeTimeZoneName(timeZone, {\n\t\t\tzoneNames: Object.keys(tzData),\n\t\t\tuppercaseLinks\n\t\t});\n\t} else timeZone = getDefaultTimeZone();\n',
        to: '\ttimeZone = __gorender.canonicalTimeZone(timeZone);\n',
      },
      {
        from: 'DateTimeFormat.getDefaultTimeZone = () => DateTimeFormat.__defaultTimeZone;',
        to: 'DateTimeFormat.getDefaultTimeZone = () => __gorender.canonicalTimeZone(void 0);',
      },
      { ...fileEdit('datetimeformat-lazy-parse'), append: fs.readFileSync(path.join(here, 'patches', 'lazy-parse-helpers.js'), 'utf8') },
      {
        // A Date's time in milliseconds from its epoch nanoseconds without
        // arbitrary-precision decimals (a third of the time of a format on
        // goja): exact for the BigInt nanoseconds of Dates and Temporal.
        from: '\tconst milliseconds = new Decimal$1(String(epochNanoseconds)).div(1e6);\n\tconst [timeZoneOffset, inDST] = getApplicableZoneData(milliseconds.floor().toNumber(), timeZone, tzData);\n\tconst tz = milliseconds.plus(timeZoneOffset).floor().toNumber();\n',
        to: '\tconst ms = floorMilliseconds(epochNanoseconds);\n\tconst [timeZoneOffset, inDST] = getApplicableZoneData(ms, timeZone, tzData);\n\tconst tz = ms + timeZoneOffset;\n',
        append: 'function floorMilliseconds(ns) {\n\tif (typeof ns !== "bigint") return new Decimal$1(String(ns)).div(1e6).floor().toNumber();\n' +
          '\tlet q = ns / 1000000n;\n\tif (ns < 0n && q * 1000000n !== ns) q -= 1n;\n\treturn Number(q);\n}\n',
      },
      {
        // Dates' fields in Latin digits need no NumberFormat (arbitrary-
        // precision decimals per field): the same digits, directly.
        from: '\treturn {\n\t\tnf,\n\t\tnf2,\n\t\tnf3\n\t};\n}\n',
        to: '\tif (internalSlots.numberingSystem === "latn") return {\n\t\tnf: latinDigits(nf, 1),\n\t\tnf2: latinDigits(nf2, 2),\n\t\tnf3\n\t};\n\treturn {\n\t\tnf,\n\t\tnf2,\n\t\tnf3\n\t};\n}\n',
        append: 'function latinDigits(nf, minDigits) {\n\treturn {\n\t\tformat(v) {\n\t\t\tif (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) return nf.format(v);\n' +
          '\t\t\tconst s = String(v);\n\t\t\treturn s.length < minDigits ? "0".repeat(minDigits - s.length) + s : s;\n\t\t},\n' +
          '\t\tformatToParts(v) {\n\t\t\treturn nf.formatToParts(v);\n\t\t}\n\t};\n}\n',
      },
      {
        // V8 asks ICU's pattern generator to match the hour's length to the
        // request (UDATPG_MATCH_HOUR_FIELD_LENGTH), which it does when the
        // requested skeleton is not one of CLDR's: {hour: 'numeric', minute:
        // '2-digit'} in de is "6:07" (CLDR's Hm is "HH:mm"), {hour:
        // 'numeric'} stays "03 Uhr" (CLDR's H), and ranges keep the interval
        // patterns' lengths ("09:00–17:30").
        from: '\treturn patternFormat;\n',
        to: '\tif (options.hour !== void 0 && patternFormat.hour !== options.hour && !DATE_TIME_PROPS.every((p) => options[p] === skeletonFormat[p])) patternFormat.formatHour = options.hour;\n\treturn patternFormat;\n',
      },
      {
        from: '\tif (opt.dayPeriod !== void 0) internalSlots.dayPeriod = opt.dayPeriod;\n',
        to: '\tinternalSlots.formatHour = bestFormat.formatHour;\n\tif (opt.dayPeriod !== void 0) internalSlots.dayPeriod = opt.dayPeriod;\n',
      },
      {
        from: '\t\t\tlet f = internalSlots[p];\n',
        to: '\t\t\tlet f = p === "hour" && internalSlots.formatHour !== void 0 && !(rangeFormatOptions && rangeFormatOptions.patternParts) ? internalSlots.formatHour : internalSlots[p];\n',
      },
      {
        // ICU writes a GMT offset in the locale's digits (Arabic: غرينتش+٥:٣٠).
        from: '\t\t\t\tif (tm.inDST && names.length >= 2 && names[0] === names[1]) fv = offsetToGmtString(gmtFormat, hourFormat, tm.timeZoneOffset, f);\n',
        to: '\t\t\t\tif (tm.inDST && names.length >= 2 && names[0] === names[1]) fv = localizedDigits(offsetToGmtString(gmtFormat, hourFormat, tm.timeZoneOffset, f), nf);\n',
        append: 'function localizedDigits(s, nf) {\n\treturn s.replace(/[0-9]/g, (d) => nf.format(Number(d)));\n}\n',
      },
      {
        // ... and a zero offset as GMT+0 where a zone has no short name, as
        // V8 does (FormatJS: "GMT").
        from: '\telse if (mins || hours) {\n\t\tif (!mins) pattern = pattern.replace(/:?m+/, "");\n',
        to: '\telse {\n\t\tif (!mins) pattern = pattern.replace(/:?m+/, "");\n',
      },
      {
        from: '\t\t\t} else fv = offsetToGmtString(gmtFormat, hourFormat, tm.timeZoneOffset, f);\n',
        to: '\t\t\t} else fv = localizedDigits(offsetToGmtString(gmtFormat, hourFormat, tm.timeZoneOffset, f), nf);\n',
      },
      {
        // A locale's formats (~750 per calendar) were all parsed when the
        // locale was first used, ~10 MB of objects per locale on goja: a
        // FormatList (patches/format-list.js) holds them as CLDR lists them
        // and parses the one a matcher picks.
        from: 'return parsed ??= Object.keys(formats[calendar]).map((skeleton) => parseDateTimeSkeleton(skeleton, formats[calendar][skeleton], calendarIntervals[skeleton] || findIntervalFormat(skeleton, calendarIntervals), calendarIntervals.intervalFormatFallback));',
        to: 'return parsed ??= new FormatList(formats[calendar], calendarIntervals);',
        append: fs.readFileSync(path.join(here, 'patches', 'format-list.js'), 'utf8'),
      },
      {
        // The basic matcher scores each format by the fields its skeleton
        // asks for and parses the winner.
        from: 'function BasicFormatMatcher(options, formats) {\n\tlet bestScore = -Infinity;\n\tlet bestFormat = formats[0];\n\tinvariant(Array.isArray(formats), "formats should be a list of things");\n\tfor (const format of formats) {\n',
        to: 'function BasicFormatMatcher(options, formats) {\n\tlet bestScore = -Infinity;\n\tlet bestFormat = 0;\n\tfor (let index = 0; index < formats.length; index++) {\n\t\tconst format = formats.fields(index);\n',
      },
      {
        from: '\t\t\tbestFormat = format;\n\t\t}\n\t}\n\treturn { ...bestFormat };\n}\n',
        to: '\t\t\tbestFormat = index;\n\t\t}\n\t}\n\treturn { ...formats.format(bestFormat) };\n}\n',
      },
      {
        // The best-fit matcher scored every format on every construction
        // (each toLocaleString call): bestFitFormat remembers the winner per
        // options (patches/format-list.js).
        from: '\tlet bestFormat = formats[0];\n\tinvariant(Array.isArray(formats), "formats should be a list of things");\n\tfor (const format of formats) {\n\t\tconst score = bestFitFormatMatcherScore(options, format);\n\t\tif (score > bestScore) {\n\t\t\tbestScore = score;\n\t\t\tbestFormat = format;\n\t\t}\n\t}\n\tconst skeletonFormat = { ...bestFormat };\n',
        to: '\tconst bestFormat = bestFitFormat(options, formats);\n\tconst skeletonFormat = { ...bestFormat };\n',
      },
      {
        // A format without its own interval formats looks for one among
        // the locale's interval skeletons (~700), of which it reads the
        // fields alone: those depend on the skeleton only (skeletonFields,
        // made once per skeleton, as parseDateTimeSkeleton assigns them),
        // and the entries are not read (the interval formats stay in Go,
        // src/index.js: every key but intervalFormatFallback, a string,
        // holds an object; jsvm/intl's TestLocaleTables checks it), nor the
        // keys one by one (tableKeys, patches/format-list.js).
        from: '\tfor (const key of Object.keys(intervalFormats)) {\n\t\tif (typeof intervalFormats[key] !== "object") continue;\n\t\tconst candidate = parseDateTimeSkeleton(key);\n',
        to: '\tfor (const key of tableKeys(intervalFormats)) {\n\t\tif (key === "intervalFormatFallback") continue;\n\t\tconst candidate = skeletonFields(key);\n',
      },
    ],
  },
];

// Work the polyfills do when they load, done once here instead: the language
// alias rules getcanonicallocales parses and sorts from CLDR's aliases (a
// third of a second per runtime on goja) become a literal.
const aliasRulesFrom = 'const languageAliasRules = Object.keys(languageAlias).reduce(';
const aliasRulesEnd = '}, Object.create(null));\n';
function precomputeAliasRules(text, file) {
  const start = text.indexOf(aliasRulesFrom);
  const end = text.indexOf(aliasRulesEnd, start);
  if (start < 0 || end < 0 || text.indexOf(aliasRulesFrom, start + 1) >= 0) throw new Error('alias rules not found once in ' + file);
  const script = text.replace(/^export \{[^}]*\};?$/m, '') + '\n;globalThis.__rules = languageAliasRules;';
  const ctx = vm.createContext({});
  vm.runInContext(script, ctx, { filename: file });
  // Each language's rules stay JSON text until a tag of that language is
  // canonicalized: parsed, the 473 rules are ~1.5 MB of objects per runtime
  // on goja, and a page meets a few languages.
  const rules = JSON.parse(vm.runInContext('JSON.stringify(__rules)', ctx));
  const texts = Object.fromEntries(Object.entries(rules).map(([lang, list]) => [lang, JSON.stringify(list)]));
  const uses = [
    ['languageAliasRules[finalLangAst.lang]?.find(matches)', 'languageAliasRulesOf(finalLangAst.lang)?.find(matches)'],
    ['languageAliasRules.und?.find(matches)', 'languageAliasRulesOf("und")?.find(matches)'],
  ];
  let out = text.slice(0, start) +
    'const languageAliasRuleTexts = Object.assign(Object.create(null), JSON.parse(' + JSON.stringify(JSON.stringify(texts)) + '));\n' +
    'const languageAliasRuleLists = new Map();\n' +
    'function languageAliasRulesOf(lang) {\n\tlet rules = languageAliasRuleLists.get(lang);\n' +
    '\tif (rules === void 0 && languageAliasRuleTexts[lang] !== void 0) languageAliasRuleLists.set(lang, rules = JSON.parse(languageAliasRuleTexts[lang]));\n' +
    '\treturn rules;\n}\n' +
    text.slice(end + aliasRulesEnd.length);
  for (const [from, to] of uses) {
    if (out.split(from).length !== 2) throw new Error('alias rules use not found once in ' + file + ': ' + from);
    out = out.replace(from, () => to);
  }
  if (/\blanguageAliasRules\b/.test(out)) throw new Error('alias rules used elsewhere in ' + file);
  return out;
}

// fileEdit is an edit kept in patches/<name>.orig.js (the polyfill's code)
// and patches/<name>.new.js (what replaces it), for edits of many lines.
function fileEdit(name) {
  const read = (ext) => fs.readFileSync(path.join(here, 'patches', `${name}.${ext}.js`), 'utf8');
  return { from: read('orig'), to: read('new') };
}

// goja has no Unicode property escapes: the one class the polyfills use
// (Segmenter's word-like test) becomes explicit ranges, from this Node's
// Unicode tables.
function expandPropertyClass(cls) {
  const re = new RegExp(cls, 'u');
  const ranges = [];
  for (let c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (!re.test(String.fromCodePoint(c))) continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === c - 1) last[1] = c;
    else ranges.push([c, c]);
  }
  const hex = (c) => '\\u{' + c.toString(16) + '}';
  return '[' + ranges.map(([a, b]) => (a === b ? hex(a) : hex(a) + '-' + hex(b))).join('') + ']';
}
// supportedLocalesOf, which react-intl calls for every formatter, copied
// the 1,200 available tags into a new array (and the matcher that array into
// a new Set) on every call: the matcher takes the polyfill's Set.
patches.push({
  file: /intl-(datetimeformat|displaynames|listformat|numberformat|pluralrules|relativetimeformat|segmenter)[\\/]polyfill-force\.js$/,
  edits: [{
    all: true,
    from: 'LookupSupportedLocales(Array.from(availableLocales), requestedLocales)',
    to: 'LookupSupportedLocales(availableLocales, requestedLocales)',
  }],
});

// Handing ResolveLocale the polyfill's Set of available locales, not a new
// array of it, lets the matcher look tags up in it (1,200 tags copied twice
// per construction otherwise).
patches.push({
  file: /intl-numberformat[\\/]polyfill-force\.js$/,
  edits: [{
    from: 'const r = ResolveLocale(Array.from(availableLocales), requestedLocales, opt, ["nu"], localeData, getDefaultLocale);',
    to: 'const r = ResolveLocale(availableLocales, requestedLocales, opt, ["nu"], localeData, getDefaultLocale);',
  }],
}, {
  file: /intl-displaynames[\\/]polyfill-force\.js$/,
  edits: [{
    from: 'const r = ResolveLocale(Array.from(DisplayNames.availableLocales), requestedLocales, opt, [], DisplayNames.localeData, DisplayNames.getDefaultLocale);',
    to: 'const r = ResolveLocale(DisplayNames.availableLocales, requestedLocales, opt, [], DisplayNames.localeData, DisplayNames.getDefaultLocale);',
  }],
});
// ICU groups the digits of a compact number too (min2 by default: 1234万,
// but 100.000.000 mila miliardi past the largest pattern), in the sizes of
// the locale's decimal pattern (hi: 12,34,567 नील); FormatJS never grouped
// them.
patches.push({
  file: /intl-numberformat[\\/]polyfill-force\.js$/,
  edits: [{
    from: 'numberParts.push(...partitionNumberIntoParts(symbols, numberResult, notation, exponent, numberingSystem, !compactNumberPattern && (options.useGrouping ?? true), decimalNumberPattern,',
    to: 'numberParts.push(...partitionNumberIntoParts(symbols, numberResult, notation, exponent, numberingSystem, options.useGrouping ?? true, compactNumberPattern ? (data.numbers.decimal[numberingSystem] || data.numbers.decimal[defaultNumberingSystem]).standard : decimalNumberPattern,',
  }],
});
// CLDR (and so the polyfill's data) names the day period field
// "dayperiod"; ECMA-402's code is dayPeriod (es: a. m./p. m.).
patches.push({
  file: /intl-displaynames[\\/]polyfill-force\.js$/,
  edits: [{
    from: 'const typesData = localeData.types[type];\n\t\t\tname = typesData[style][canonicalCode] || typesData.long[canonicalCode];',
    to: 'const typesData = localeData.types[type];\n\t\t\tconst key = type === "dateTimeField" && canonicalCode === "dayPeriod" ? "dayperiod" : canonicalCode;\n\t\t\tname = typesData[style][key] || typesData.long[key];',
  }],
});
// A language with a script and no name of its own is the language's name
// with the script's in the locale pattern, as ICU's LocaleDisplayNames
// writes it (sr-Latn: Serbian (Latin)); FormatJS gave up (undefined).
patches.push({
  file: /intl-displaynames[\\/]polyfill-force\.js$/,
  edits: [{
    from: '\tconst name = typesData[style][canonicalCode] || typesData.long[canonicalCode];\n\tif (name === void 0) {',
    to: '\tconst name = typesData[style][canonicalCode] || typesData.long[canonicalCode];\n\tconst withScript = name === void 0 && /^([a-z]{2,3}|[a-z]{5,8})-([A-Z][a-z]{3})$/.exec(canonicalCode);\n\tif (withScript) {\n\t\tconst base = typesData[style][withScript[1]] || typesData.long[withScript[1]];\n\t\tconst scripts = localeData.types.script;\n\t\tconst scriptName = scripts[style][withScript[2]] || scripts.long[withScript[2]];\n\t\tif (base !== void 0 && scriptName !== void 0) return localeData.patterns.locale.replace("{0}", base).replace("{1}", scriptName);\n\t}\n\tif (name === void 0) {',
  }],
});
// A compact pattern's affix is one compact part, spaces inside it included
// (ca: "milers de milions"), and bidi marks around it are literals (he), as
// ICU's formatToParts gives them; FormatJS split the affix at each space.
patches.push({
  file: /intl-numberformat[\\/]polyfill-force\.js$/,
  edits: [{
    from: 'pattern = getPatternForSign(pattern, sign).replace(/([^\\s;\\-+\\d¤]+)/g, "{c:$1}")',
    to: 'pattern = getPatternForSign(pattern, sign).replace(/([^\\s;\\-+\\d¤\\u200e\\u200f\\u061c](?:[^;\\-+\\d¤\\u200e\\u200f\\u061c]*[^\\s;\\-+\\d¤\\u200e\\u200f\\u061c])?)/g, "{c:$1}")',
  }],
});
// A currency in scientific or engineering notation keeps the currency's
// digits as V8 does (1.00E3 $); ECMA-402 gives 0 to 3 outside the
// standard notation, which V8 keeps for compact only.
patches.push({
  file: /intl-numberformat[\\/]polyfill-force\.js$/,
  edits: [{
    from: 'if (style === "currency" && notation === "standard") {',
    to: 'if (style === "currency" && notation !== "compact") {',
  }],
});
patches.push({
  file: /intl-segmenter[\\/]polyfill-force\.js$/,
  edits: [{
    from: 'WORD_CHARACTERS_UNICODE_REGEX = new RegExp("[\\\\p{L}\\\\p{N}\\\\p{M}]", "u");',
    to: 'WORD_CHARACTERS_UNICODE_REGEX = new RegExp(' + JSON.stringify(expandPropertyClass('[\\p{L}\\p{N}\\p{M}]')) + ', "u");',
  }],
});

// The table of the tags a locale's data also stands for (CLDR's default
// content), which five polyfills each bundle a copy of: one module holds it
// for all whose copy is the same as the plural rules' (each copy is ~0.2 MB
// per runtime on goja; the polyfills only read it).
const defaultContentTable = /^const defaultContent = \{\n[\s\S]*?^\};\n/m;
const sharedDefaultContent = defaultContentTable.exec(fs.readFileSync(path.join(pkgDir('@formatjs/intl-pluralrules'), 'polyfill-force.js'), 'utf8'))[0];
const sharedDefaultContentUsers = new Set();
function shareDefaultContent(text, file) {
  const m = defaultContentTable.exec(text);
  if (!m || m[0] !== sharedDefaultContent) return text;
  sharedDefaultContentUsers.add(path.basename(path.dirname(file)));
  return 'import { defaultContent } from "gorender-shared:default-content";\n' + text.replace(m[0], () => '');
}

const patchPlugin = {
  name: 'gorender-intl-patches',
  setup(build) {
    build.onResolve({ filter: /^gorender-shared:default-content$/ }, () => ({ path: 'default-content', namespace: 'gorender-shared' }));
    build.onLoad({ filter: /.*/, namespace: 'gorender-shared' }, () => ({ contents: 'export ' + sharedDefaultContent, loader: 'js' }));
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (/intl-getcanonicallocales[\\/]index\.js$/.test(args.path)) {
        return { contents: precomputeAliasRules(fs.readFileSync(args.path, 'utf8'), args.path), loader: 'js' };
      }
      const matching = patches.filter((p) => p.file.test(args.path));
      const original = fs.readFileSync(args.path, 'utf8');
      let text = /[\\/]polyfill-force\.js$/.test(args.path) ? shareDefaultContent(original, args.path) : original;
      if (matching.length === 0) return text === original ? undefined : { contents: text, loader: 'js' };
      for (const patch of matching) {
        for (const e of patch.edits) {
          const n = text.split(e.from).length - 1;
          if (e.all ? n === 0 : n !== 1) throw new Error(`patch target not found ${e.all ? 'at all' : 'exactly once'} in ${args.path}: ${e.from.slice(0, 80)}`);
          text = e.all ? text.split(e.from).join(e.to) : text.replace(e.from, () => e.to);
          if (e.append) text += '\n' + e.append;
        }
      }
      if (!matching.some((p) => p.host)) return { contents: text, loader: 'js' };
      const hostPath = JSON.stringify(path.join(here, 'src', 'host.js'));
      return { contents: `import * as __gorender from ${hostPath};\n` + text, loader: 'js' };
    });
  },
};

async function bundle() {
  await esbuild.build({
    entryPoints: [path.join(here, 'src', 'index.js')],
    outfile: path.join(dist, 'intl.js'),
    bundle: true,
    format: 'iife',
    globalName: '__gorenderIntl',
    platform: 'neutral',
    // What goja does not parse is lowered; everything else stays as written.
    target: 'es2022',
    supported: { 'class-static-blocks': false, 'regexp-match-indices': false, 'regexp-unicode-property-escapes': false, 'regexp-set-notation': false },
    minify: false,
    legalComments: 'inline',
    charset: 'ascii',
    logLevel: 'warning',
    plugins: [patchPlugin],
    // One copy of the locale matcher for every polyfill (package.json pins
    // the one they all get).
    alias: { '@formatjs/intl-localematcher': path.join(here, 'node_modules', '@formatjs', 'intl-localematcher') },
    banner: { js: '// Generated by jsvm/intl/build.sh from jsvm/intl/src and the npm packages in package.json. Do not edit.\n(function () {' },
    footer: { js: 'return __gorenderIntl.default;\n})()' },
  });
}

// collatorLocales are the locales of ICU's collation data (V8's
// Intl.Collator's available locales, Collator::getAvailableLocales), as
// Node's ICU resolves each locale the polyfills know: de-CH resolves to de,
// en-US to en-US, a locale without collation data to the default locale.
function collatorLocales(tags) {
  const fallback = new Intl.Collator().resolvedOptions().locale;
  const found = new Set([fallback]);
  for (const tag of tags.split(' ')) {
    const r = new Intl.Collator(tag).resolvedOptions().locale;
    if (r !== fallback) found.add(r);
  }
  return [...found].sort().join(' ');
}

const skipData = process.argv.includes('--code-only');
if (!skipData) {
  const extracted = await extractLocaleData();
  const archive = pack(extracted, 64 << 10);
  fs.writeFileSync(path.join(dist, 'locale-data.bin'), archive);
  fs.writeFileSync(path.join(here, 'src', 'generated.json'),
    JSON.stringify((() => {
      const locales = localeIndex(extracted);
      return { locales, zones: zoneAliases(), supported: supportedValues(extracted), collator: collatorLocales(locales.datetimeformat.tags) };
    })()) + '\n');
  console.log(`dist/locale-data.bin: ${archive.length} bytes (${atTimeMisses.length} date-time combinations kept as FormatJS made them)`);
} else {
  // --code-only (while working on src/): keep the data, refresh the rest.
  const g = JSON.parse(fs.readFileSync(path.join(here, 'src', 'generated.json'), 'utf8'));
  fs.writeFileSync(path.join(here, 'src', 'generated.json'), JSON.stringify({ ...g, collator: collatorLocales(g.locales.datetimeformat.tags), zones: zoneAliases() }) + '\n');
}
await bundle();
console.log(`dist/intl.js: ${fs.statSync(path.join(dist, 'intl.js')).size} bytes (default-content table shared by ${[...sharedDefaultContentUsers].sort().join(', ')})`);

// gorender's Intl for the pure-Go engines: the FormatJS polyfills, made to
// answer as Node 20 does (ICU 78, CLDR 48), with what Go does better
// (collation, case mapping, time zones) done in Go.
//
// Bundled by build.mjs into dist/intl.js, whose completion value is
// install(host). install.js runs it in a runtime the first time the page touches
// Intl or a locale-aware built-in; importing the polyfills below defines
// their classes on the global Intl, and install() then wires them to the host:
//
// - Locale data is loaded per locale, on first use: each polyfill's
//   localeData becomes a proxy that asks the host for a locale's data the
//   first time the polyfill looks it up (host.localeData, from the archive
//   dist/locale-data.bin that Go embeds); its large tables stay in Go, and
//   an entry is read when the polyfill first reads it (host.localeKeys,
//   host.localeEntry).
// - Time zones come from Go's time zone database (host.zoneOffset), with
//   ICU's canonical names (CLDR's bcp47 time zone aliases).
// - Intl.Collator and String.prototype.localeCompare compare in Go
//   (golang.org/x/text/collate, host.collate).
import '@formatjs/intl-locale/polyfill-force.js';
import '@formatjs/intl-pluralrules/polyfill-force.js';
import '@formatjs/intl-numberformat/polyfill-force.js';
import '@formatjs/intl-datetimeformat/polyfill-force.js';
import '@formatjs/intl-relativetimeformat/polyfill-force.js';
import '@formatjs/intl-listformat/polyfill-force.js';
import '@formatjs/intl-displaynames/polyfill-force.js';
import '@formatjs/intl-segmenter/polyfill-force.js';
import '@formatjs/intl-supportedvaluesof/polyfill-force.js';
import { getCanonicalLocales } from '@formatjs/intl-getcanonicallocales';
import { ResolveLocale, LookupSupportedLocales } from '@formatjs/intl-localematcher';
import generated from './generated.json';
import { setHost, host } from './host.js';
import { installCollator } from './collator.js';
import { alignWithNode } from './node20.js';

const kinds = {
  pluralrules: Intl.PluralRules,
  numberformat: Intl.NumberFormat,
  datetimeformat: Intl.DateTimeFormat,
  relativetimeformat: Intl.RelativeTimeFormat,
  listformat: Intl.ListFormat,
  displaynames: Intl.DisplayNames,
};

// revive turns plural rules' functions (stored as {"$fn": source}) back into
// functions. Their source is FormatJS's generated code, shipped in the
// archive the binary embeds.
function revive(key, v) {
  if (v !== null && typeof v === 'object' && typeof v.$fn === 'string') {
    return (0, eval)('(' + v.$fn + ')');
  }
  return v;
}

// lazyLocaleData gives polyfill C every tag it would know with all locales
// loaded, and a localeData that loads a locale's file the first time it is
// read. While a file loads, C.__addLocaleData may write only the tags that
// file provides (build.mjs computed them by loading every file in order), so
// the order in which a page asks for locales never changes which data a tag
// resolves to.
//
// The large tables of a locale's data (the date formats, interval formats,
// zone, currency and unit names: jsvm/intl/tables.go, tablePaths) stay in
// Go, one copy per process: the host hands a locale's data over with the
// string TABLE + path where each was, and localeTable makes that an object
// which reads an entry from the host the first time the polyfill reads it.
const TABLE = '@gorender-table:';

// A table's key list, as Object.keys gives it, is table[TABLE_KEYS]
// (tableKeys in patches/format-list.js reads it): Object.keys asks a proxy
// about each key, ~700 per table.
const TABLE_KEYS = Symbol.for('gorender.intl.tableKeys');

// keyLists are the keys of the tables read in this runtime, by the text the
// host gives: "\n" + that text + "\n", which a key is looked up in, and the
// array of them once they are listed. Tables with the same keys share one.
const keyLists = new Map();

// localeTable is a table of a locale file's data: an object (a proxy) whose
// keys are the table's, in its order, whose entries are parsed when first
// read, and which inherits from Object.prototype as the parsed JSON did. The
// polyfills only read it. A locale has a dozen tables: they share one
// handler, and each keeps its state on its target, under TABLE_STATE.
const TABLE_STATE = Symbol('table');
function localeTable(kind, file, path) {
  const target = {};
  target[TABLE_STATE] = { kind, file, path, keys: null, entries: null };
  return new Proxy(target, tableHandler);
}
function tableKeys(state) {
  if (state.keys === null) {
    const text = host.localeKeys(state.kind, state.file, state.path);
    let keys = keyLists.get(text);
    if (!keys) keyLists.set(text, keys = { text: '\n' + text + '\n', list: null });
    state.keys = keys;
  }
  return state.keys;
}
// tableKeyList is the keys as an array, made when they are first listed.
function tableKeyList(state) {
  const keys = tableKeys(state);
  if (keys.list === null) keys.list = keys.text === '\n\n' ? [] : keys.text.slice(1, -1).split('\n');
  return keys.list;
}
function tableHas(state, key) {
  return typeof key === 'string' && key.indexOf('\n') < 0 && tableKeys(state).text.indexOf('\n' + key + '\n') >= 0;
}
function tableEntry(state, key) {
  if (state.entries === null) state.entries = new Map();
  let v = state.entries.get(key);
  if (v === undefined && !state.entries.has(key)) {
    v = JSON.parse(host.localeEntry(state.kind, state.file, state.path, key));
    state.entries.set(key, v);
  }
  return v;
}
const tableHandler = {
  get(t, key) {
    const state = t[TABLE_STATE];
    if (typeof key === 'string') {
      if (state.entries !== null && state.entries.has(key)) return state.entries.get(key);
      if (tableHas(state, key)) return tableEntry(state, key);
    } else if (key === TABLE_KEYS) {
      return tableKeyList(state);
    } else if (key === TABLE_STATE) {
      return undefined;
    }
    return Reflect.get(t, key);
  },
  has: (t, key) => tableHas(t[TABLE_STATE], key) || (key !== TABLE_STATE && Reflect.has(t, key)),
  ownKeys: (t) => tableKeyList(t[TABLE_STATE]),
  // A data property whose value is read when it is read: listing the keys
  // (Object.keys, for-in) parses no entry.
  getOwnPropertyDescriptor(t, key) {
    const state = t[TABLE_STATE];
    if (!tableHas(state, key)) return undefined;
    return { get: () => tableEntry(state, key), set: undefined, enumerable: true, configurable: true };
  },
  set: () => false,
  defineProperty: () => false,
  deleteProperty: () => false,
};

// The Set of those tags is C.availableLocales, which the locale matcher
// looks tags up in; polyfills that know the same tags share one (each is
// ~0.3 MB on goja). Loading a file adds no tag to it: build.mjs recorded
// every tag the polyfill registers with all files loaded.
const tagSets = new Map();
function tagSet(tags) {
  let set = tagSets.get(tags);
  if (!set) tagSets.set(tags, set = new Set(tags.split(' ')));
  return set;
}

function lazyLocaleData(kind, C) {
  const index = generated.locales[kind];
  const known = tagSet(index.tags);
  const ownerOf = (tag) => index.owner[tag] || tag;
  const target = {};
  const loaded = new Set();
  let loading = null;
  const load = (file) => {
    if (loaded.has(file)) return;
    loaded.add(file);
    const data = JSON.parse(host.localeData(kind, file), function (key, v) {
      if (typeof v === 'string' && v.startsWith(TABLE)) return localeTable(kind, file, v.slice(TABLE.length));
      return kind === 'pluralrules' ? revive(key, v) : v;
    });
    loading = file;
    try {
      C.__addLocaleData({ data, locale: file });
    } finally {
      loading = null;
    }
  };
  C.localeData = new Proxy(target, {
    get(t, tag) {
      if (typeof tag === 'string' && loading === null && known.has(tag) && !Object.prototype.hasOwnProperty.call(t, tag)) {
        load(ownerOf(tag));
      }
      return t[tag];
    },
    set(t, tag, v) {
      if (typeof tag !== 'string' || !known.has(tag) || ownerOf(tag) === loading) t[tag] = v;
      return true;
    },
  });
  C.availableLocales = known;
  C.__defaultLocale = defaultLocale();
}

// defaultLocale is the process's locale (host.defaultLocale, from LANG as
// ICU reads it) when it is a language tag, else en-US.
let theDefault = null;
function defaultLocale() {
  if (theDefault === null) {
    try {
      theDefault = Intl.getCanonicalLocales(host.defaultLocale())[0] || 'en-US';
    } catch (e) {
      theDefault = 'en-US';
    }
  }
  return theDefault;
}

export default function install(h) {
  setHost(h);
  // getcanonicallocales' own polyfill-force would bundle a second copy of
  // the module intl-locale imports: define it from that one.
  Object.defineProperty(Intl, 'getCanonicalLocales', { value: getCanonicalLocales, writable: true, configurable: true });
  for (const kind of Object.keys(kinds)) lazyLocaleData(kind, kinds[kind]);
  installCollator({
    ResolveLocale,
    LookupSupportedLocales,
    availableLocales: tagSet(generated.collator),
    defaultLocale: () => Intl.DateTimeFormat.__defaultLocale,
  });
  alignWithNode(generated);
}

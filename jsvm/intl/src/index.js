// gorender's Intl for the pure-Go engines: the FormatJS polyfills, made to
// answer as Node 20 does (ICU 78, CLDR 48), with what Go does better
// (collation, case mapping, time zones) done in Go.
//
// Bundled by build.mjs into dist/intl.js, whose completion value is
// install(host). env.js runs it in a runtime the first time the page touches
// Intl or a locale-aware built-in; importing the polyfills below defines
// their classes on the global Intl, and install() then wires them to the host:
//
// - Locale data is loaded per locale, on first use: each polyfill's
//   localeData becomes a proxy that asks the host for a locale's data the
//   first time the polyfill looks it up (host.localeData, from the archive
//   dist/locale-data.bin that Go embeds).
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
// deferredSubtrees are the parts of a locale's data the host hands over as
// JSON text (jsvm/intl/data.go, deferredSubtrees: the same list): tables of
// names, of which a page reads a few. deferredObject parses such a text the
// first time the polyfill reads or lists the object (the polyfills only look
// names up in them).
const deferredSubtrees = { datetimeformat: ['timeZoneName'], numberformat: ['currencies'] };
function deferredObject(text) {
  let parsed = null;
  const object = () => {
    if (parsed === null) {
      parsed = JSON.parse(text);
      text = null;
    }
    return parsed;
  };
  return new Proxy(Object.create(null), {
    get: (t, key) => object()[key],
    has: (t, key) => key in object(),
    ownKeys: () => Reflect.ownKeys(object()),
    getOwnPropertyDescriptor(t, key) {
      const d = Reflect.getOwnPropertyDescriptor(object(), key);
      if (d) d.configurable = true;
      return d;
    },
  });
}

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
    const data = JSON.parse(host.localeData(kind, file), kind === 'pluralrules' ? revive : undefined);
    for (const key of deferredSubtrees[kind] || []) {
      if (typeof data[key] === 'string') data[key] = deferredObject(data[key]);
    }
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
    availableLocales: tagSet(generated.locales.datetimeformat.tags),
    defaultLocale: () => Intl.DateTimeFormat.__defaultLocale,
  });
  alignWithNode(generated);
}

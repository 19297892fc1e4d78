// Intl.Collator (FormatJS has none): locale and options resolved as
// ECMA-402 says, comparison done in Go (golang.org/x/text/collate, through
// host.collate). String.prototype.localeCompare uses it.
import { host } from './host.js';

// ICU's defaults that differ from root: Danish and Maltese sort uppercase
// first; Thai ignores punctuation (its standard collation, not the search
// one, which is root's).
const upperFirst = new Set(['da', 'mt']);
const punctuationIgnored = new Set(['th']);

const slots = new WeakMap();

function getOption(options, name, allowed, fallback) {
  let v = options[name];
  if (v === undefined) return fallback;
  if (allowed === 'boolean') return Boolean(v);
  v = String(v);
  if (allowed.indexOf(v) < 0) throw new RangeError(`Value ${v} out of range for Intl.Collator options property ${name}`);
  return v;
}

export function installCollator({ ResolveLocale, LookupSupportedLocales, availableLocales, defaultLocale }) {
  const localeData = new Proxy({}, {
    get: () => ({ co: [null], kf: ['false', 'lower', 'upper'], kn: ['false', 'true'] }),
  });
  const canonicalize = (locales) => Intl.getCanonicalLocales(locales);

  function Collator(locales, options) {
    if (!new.target) return new Collator(locales, options);
    const requested = canonicalize(locales);
    options = options === undefined ? Object.create(null) : Object(options);
    const usage = getOption(options, 'usage', ['sort', 'search'], 'sort');
    const localeMatcher = getOption(options, 'localeMatcher', ['lookup', 'best fit'], 'best fit');
    const collation = options.collation;
    if (collation !== undefined && !/^[a-z0-9]{3,8}(-[a-z0-9]{3,8})*$/i.test(String(collation))) {
      throw new RangeError('Invalid collation : ' + String(collation));
    }
    let numeric = options.numeric;
    if (numeric !== undefined) numeric = String(Boolean(numeric));
    const caseFirst = getOption(options, 'caseFirst', ['upper', 'lower', 'false'], undefined);
    const r = ResolveLocale(availableLocales, requested, { localeMatcher, kn: numeric, kf: caseFirst }, ['co', 'kf', 'kn'], localeData, defaultLocale);
    const language = r.dataLocale.split('-')[0];
    let kf = r.kf;
    if (caseFirst === undefined && !/-u-(.+-)?kf-/.test(r.locale)) kf = upperFirst.has(language) ? 'upper' : 'false';
    const sensitivity = getOption(options, 'sensitivity', ['base', 'accent', 'case', 'variant'], 'variant');
    const ignorePunctuation = getOption(options, 'ignorePunctuation', 'boolean', usage === 'sort' && punctuationIgnored.has(language));
    const s = {
      locale: r.locale,
      dataLocale: r.dataLocale,
      usage,
      sensitivity,
      ignorePunctuation,
      collation: 'default',
      numeric: r.kn === 'true',
      caseFirst: kf,
      bound: undefined,
    };
    slots.set(this, s);
  }

  function slotsOf(c, method) {
    const s = slots.get(c);
    if (!s) throw new TypeError(`Method Intl.Collator.prototype.${method} called on incompatible receiver ${String(c)}`);
    return s;
  }

  Object.defineProperty(Collator.prototype, 'compare', {
    configurable: true,
    get() {
      const s = slotsOf(this, 'compare');
      if (!s.bound) {
        const f = (x, y) => host.collate(s.dataLocale, s.sensitivity, s.caseFirst, s.numeric, s.ignorePunctuation, String(x), String(y));
        s.bound = f;
      }
      return s.bound;
    },
  });
  Object.defineProperty(Collator.prototype, 'resolvedOptions', {
    configurable: true, writable: true,
    value: function resolvedOptions() {
      const s = slotsOf(this, 'resolvedOptions');
      return {
        locale: s.locale,
        usage: s.usage,
        sensitivity: s.sensitivity,
        ignorePunctuation: s.ignorePunctuation,
        collation: s.collation,
        numeric: s.numeric,
        caseFirst: s.caseFirst,
      };
    },
  });
  Object.defineProperty(Collator.prototype, Symbol.toStringTag, { value: 'Intl.Collator', configurable: true });
  Object.defineProperty(Collator, 'supportedLocalesOf', {
    configurable: true, writable: true,
    value: function supportedLocalesOf(locales) {
      return LookupSupportedLocales(availableLocales, canonicalize(locales));
    },
  });
  Object.defineProperty(Intl, 'Collator', { value: Collator, configurable: true, writable: true });

  Object.defineProperty(String.prototype, 'localeCompare', {
    configurable: true, writable: true,
    value: function localeCompare(that, locales, options) {
      if (this === null || this === undefined) throw new TypeError('String.prototype.localeCompare called on null or undefined');
      return new Collator(locales, options).compare(String(this), String(that));
    },
  });
}

// Where the polyfills' API or answers differ from Node 20's (V8 11.3 on ICU
// 78), this makes them Node's. Each difference was found by comparing with
// Node (tests/testdata/intl, whose record.mjs records Node's answers); what
// is left is listed in docs/intl.md.
import { canonicalZoneList } from './host.js';

function redefine(obj, name, desc) {
  Object.defineProperty(obj, name, { configurable: true, ...desc });
}

function wrapMethod(C, name, wrap) {
  const orig = C.prototype[name];
  redefine(C.prototype, name, { writable: true, value: wrap(orig) });
}

// reorder returns o's own properties in V8's order (keys missing from order
// keep their place after them).
function reorder(o, order) {
  const out = {};
  for (const k of order) if (Object.prototype.hasOwnProperty.call(o, k)) out[k] = o[k];
  for (const k of Object.keys(o)) if (!Object.prototype.hasOwnProperty.call(out, k)) out[k] = o[k];
  return out;
}

const numberFormatOrder = ['locale', 'numberingSystem', 'style', 'currency', 'currencyDisplay', 'currencySign', 'unit', 'unitDisplay',
  'minimumIntegerDigits', 'minimumFractionDigits', 'maximumFractionDigits', 'minimumSignificantDigits', 'maximumSignificantDigits',
  'useGrouping', 'notation', 'compactDisplay', 'signDisplay', 'roundingMode', 'roundingIncrement', 'trailingZeroDisplay', 'roundingPriority'];

// V8 lists plural categories in ICU's order: alphabetical, "other" last.
function icuCategoryOrder(cats) {
  return cats.filter((c) => c !== 'other').sort().concat(cats.indexOf('other') >= 0 ? ['other'] : []);
}

// V8 prints a plain space where ICU 72+ puts U+202F NARROW NO-BREAK SPACE
// (before AM/PM) in the strings of DateTimeFormat's format() and of Date's
// toLocale*String(); formatToParts() and formatRange() keep ICU's.
function withoutNarrowSpace(s) {
  return s.indexOf('\u202f') < 0 ? s : s.replace(/\u202f/g, ' ');
}

function plainSpaceFormat() {
  const DTF = Intl.DateTimeFormat;
  const desc = Object.getOwnPropertyDescriptor(DTF.prototype, 'format');
  const bound = new WeakMap();
  redefine(DTF.prototype, 'format', {
    get() {
      let f = bound.get(this);
      if (!f) {
        const inner = desc.get.call(this);
        f = function (date) { return withoutNarrowSpace(inner(date)); };
        bound.set(this, f);
      }
      return f;
    },
  });
  for (const name of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) {
    wrapMethod(Date, name, (orig) => ({ [name](locales, options) { return withoutNarrowSpace(orig.call(this, locales, options)); } })[name]);
  }
}

// ICU adjusts a list's conjunction to the next word, as FormatJS does not:
// Spanish "y" is "e" before an i sound and "o" is "u" before an o sound;
// Hebrew "ו" takes a hyphen before a word that is not Hebrew.
const listAdjustments = {
  es: [[/^ y $/, /^(i.*|hi|hi[^ae].*)$/i, ' e '], [/^ o $/, /^(o.*|ho.*|8.*|11([.]?[0-9]{3})*([.][0-9]*)?)$/i, ' u ']],
  he: [[/ו$/, /^[^\u0590-\u05ff]/, null]],
};
function adjustListParts(language, parts) {
  const rules = listAdjustments[language];
  if (!rules) return parts;
  for (let i = 1; i + 1 < parts.length; i++) {
    if (parts[i].type !== 'literal' || parts[i + 1].type !== 'element') continue;
    for (const [literal, next, replacement] of rules) {
      if (literal.test(parts[i].value) && next.test(parts[i + 1].value)) {
        parts[i] = { type: 'literal', value: replacement === null ? parts[i].value + '-' : replacement };
        break;
      }
    }
  }
  return parts;
}

function alignListFormat() {
  const LF = Intl.ListFormat;
  const language = (lf) => lf.resolvedOptions().locale.split('-')[0];
  wrapMethod(LF, 'formatToParts', (orig) => function formatToParts(list) {
    return adjustListParts(language(this), orig.call(this, list));
  });
  wrapMethod(LF, 'format', (orig) => function format(list) {
    if (!listAdjustments[language(this)]) return orig.call(this, list);
    return this.formatToParts(list).map((p) => p.value).join('');
  });
}

// NumberFormat parts as ICU splits them: a bidi mark before a sign is a
// literal of its own, and an exponent is in the number's digits.
const bidiMark = /^[\u200e\u200f\u061c]+/;
function alignNumberParts() {
  const NF = Intl.NumberFormat;
  const digitsOf = new Map();
  const digits = (locale, nu) => {
    let d = digitsOf.get(nu);
    if (!d) {
      const f = new NF(locale, { numberingSystem: nu, useGrouping: false });
      d = '0123456789'.split('').map((c) => f.format(Number(c)));
      digitsOf.set(nu, d);
    }
    return d;
  };
  const fixParts = (nf, parts) => {
    let out = null;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if ((p.type === 'minusSign' || p.type === 'plusSign') && bidiMark.test(p.value) && p.value.replace(bidiMark, '') !== '') {
        out = out || parts.slice(0, i);
        const mark = p.value.match(bidiMark)[0];
        const prev = out[out.length - 1];
        if (prev && prev.type === 'literal') out[out.length - 1] = { type: 'literal', value: prev.value + mark };
        else out.push({ type: 'literal', value: mark });
        out.push({ type: p.type, value: p.value.slice(mark.length) });
        continue;
      }
      if (p.type === 'exponentInteger' && /[0-9]/.test(p.value)) {
        const o = nf.resolvedOptions();
        if (o.numberingSystem !== 'latn') {
          out = out || parts.slice(0, i);
          const d = digits(o.locale, o.numberingSystem);
          out.push({ type: p.type, value: p.value.replace(/[0-9]/g, (c) => d[+c]) });
          continue;
        }
      }
      if (out) out.push(p);
    }
    return out || parts;
  };
  wrapMethod(NF, 'formatToParts', (orig) => function formatToParts(x) {
    return fixParts(this, orig.call(this, x));
  });
  const desc = Object.getOwnPropertyDescriptor(NF.prototype, 'format');
  const bound = new WeakMap();
  redefine(NF.prototype, 'format', {
    get() {
      let f = bound.get(this);
      if (!f) {
        const inner = desc.get.call(this);
        const nf = this;
        const o = nf.resolvedOptions();
        f = o.numberingSystem === 'latn' || (o.notation !== 'scientific' && o.notation !== 'engineering') ? inner
          : function (x) { return nf.formatToParts(x).map((p) => p.value).join(''); };
        bound.set(this, f);
      }
      return f;
    },
  });
}

export function alignWithNode(generated) {
  plainSpaceFormat();
  alignListFormat();
  alignNumberParts();
  wrapMethod(Intl.NumberFormat, 'resolvedOptions', (orig) => function resolvedOptions() {
    return reorder(orig.call(this), numberFormatOrder);
  });
  wrapMethod(Intl.PluralRules, 'resolvedOptions', (orig) => function resolvedOptions() {
    const o = orig.call(this);
    if (Array.isArray(o.pluralCategories)) o.pluralCategories = icuCategoryOrder(o.pluralCategories);
    return o;
  });

  // Node 20's Intl.Locale has the Intl Locale Info getters (calendars,
  // hourCycles, weekInfo, ...), not the later get*() methods, nor
  // firstDayOfWeek and variants.
  const L = Intl.Locale.prototype;
  const getters = {
    calendars: 'getCalendars', collations: 'getCollations', hourCycles: 'getHourCycles',
    numberingSystems: 'getNumberingSystems', textInfo: 'getTextInfo', timeZones: 'getTimeZones', weekInfo: 'getWeekInfo',
  };
  for (const [getter, method] of Object.entries(getters)) {
    const fn = L[method];
    redefine(L, getter, { get() { return fn.call(this); } });
    delete L[method];
  }
  delete L.firstDayOfWeek;
  delete L.variants;

  // Static lists (build.mjs): the polyfill probes by constructing a
  // formatter per candidate, seconds per call on goja.
  const supported = { ...generated.supported, timeZone: null };
  redefine(Intl, 'supportedValuesOf', {
    writable: true,
    value: {
      supportedValuesOf(key) {
        key = String(key);
        if (!Object.prototype.hasOwnProperty.call(supported, key)) throw new RangeError('Invalid key : ' + key);
        if (key === 'timeZone') return canonicalZoneList();
        return supported[key].slice();
      },
    }.supportedValuesOf,
  });
}

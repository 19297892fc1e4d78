// The Intl differential generator (docs/intl.md "Differential test"): a
// seeded, deterministic set of calls of every Intl constructor and
// toLocale*String method, in each of LOCALES, with the options each
// accepts, plus normalize and case mapping on a Unicode sample. Run on
// Node 20 (its full ICU is the reference) and on each engine; the answers
// are compared call by call (jsvm/engines/intldiff_test.go).
//
// intlDiff.run(locale, perArea) answers the first perArea calls of every
// area in locale as JSON {"area locale call": answer}. The calls of an
// area in a locale come from a generator seeded by SEED, the area and the
// locale, so a smaller perArea is a prefix of a larger one: the CI sample
// is a subset of the whole set. Dates are fixed instants with an explicit
// time zone; a call that throws answers "!" and the error's name (messages
// are not compared).
(function (g) {
  'use strict';
  var SEED = 20261207;

  var LOCALES = [
    'und', 'en-US', 'en-GB', 'en-IN', 'de-DE', 'de-CH', 'fr-FR', 'fr-CA', 'es-ES', 'es-MX', 'it-IT', 'pt-BR',
    'nl-NL', 'sv-SE', 'da-DK', 'nb-NO', 'fi-FI', 'pl-PL', 'cs-CZ', 'hu-HU', 'ro-RO', 'el-GR', 'ru-RU', 'uk-UA',
    'tr-TR', 'ar-EG', 'ar-SA', 'he-IL', 'fa-IR', 'hi-IN', 'bn-BD', 'mr-IN', 'ta-IN', 'th-TH', 'vi-VN', 'id-ID',
    'ms-MY', 'ja-JP', 'ko-KR', 'zh-CN', 'zh-TW', 'zh-Hant-HK', 'my-MM', 'am-ET', 'sw-KE', 'lt-LT', 'ca-ES',
  ];

  // mulberry32 seeded by a string hash (FNV-1a).
  function rng(key) {
    var h = 2166136261 >>> 0;
    for (var i = 0; i < key.length; i++) {
      h ^= key.charCodeAt(i);
      h = Math.imul(h, 16777619) >>> 0;
    }
    var a = h;
    function next() {
      a = (a + 0x6d2b79f5) >>> 0;
      var t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }
    return {
      int: function (n) { return Math.floor(next() * n); },
      pick: function (xs) { return xs[Math.floor(next() * xs.length)]; },
      chance: function (p) { return next() < p; },
    };
  }

  // Options: each key's value picked from its list, the key left out when
  // the pick is undefined.
  function opts(r, spec) {
    var o = {};
    Object.keys(spec).forEach(function (k) {
      var v = r.pick(spec[k]);
      if (v !== undefined) o[k] = v;
    });
    return o;
  }
  var U = undefined;

  function sortedJSON(v) {
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (Array.isArray(v)) return '[' + v.map(sortedJSON).join(',') + ']';
    return '{' + Object.keys(v).sort().map(function (k) { return JSON.stringify(k) + ':' + sortedJSON(v[k]); }).join(',') + '}';
  }
  function parts(ps) {
    return ps.map(function (p) { return p.type + (p.source ? '/' + p.source : '') + ':' + p.value; }).join('|');
  }

  var NUMBERS = [0, -0, 1, 2, 3, 5, 11, 21, 101, 0.5, 1.5, -7.25, 1234.5678, 1000000, 987654321.123, 0.000123, -1234, 12345678901234567890, 1e21, NaN, Infinity, 22.5, 105];
  var DATES = [
    Date.UTC(2024, 0, 5, 13, 4, 5, 67), Date.UTC(2024, 2, 31, 0, 30), Date.UTC(2023, 11, 31, 23, 59, 59, 999),
    Date.UTC(1999, 6, 4, 8, 7, 6), Date.UTC(2025, 5, 15, 12, 0), Date.UTC(1969, 11, 31, 16, 0), Date.UTC(2024, 9, 27, 1, 30),
  ];
  var ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Tokyo', 'Asia/Kolkata', 'Australia/Adelaide', 'America/Sao_Paulo', 'Asia/Tehran', 'Pacific/Chatham', 'Africa/Cairo', 'Etc/GMT+5'];
  var UNITS = ['kilometer-per-hour', 'meter', 'kilogram', 'liter', 'percent', 'second', 'minute', 'hour', 'day', 'week', 'month', 'year', 'byte', 'kilobyte', 'megabyte', 'gigabyte', 'celsius', 'fahrenheit', 'mile', 'foot', 'inch', 'degree', 'acre', 'hectare', 'milliliter', 'gallon', 'mile-per-gallon', 'liter-per-kilometer', 'millisecond', 'stone'];
  var CURRENCIES = ['USD', 'EUR', 'JPY', 'GBP', 'INR', 'EGP', 'SAR', 'ILS', 'IRR', 'RUB', 'PLN', 'TRY', 'CNY', 'THB', 'SEK', 'CHF', 'BRL', 'KRW', 'XXX', 'BHD', 'CLF'];
  var WORDS = ['a', 'A', 'á', 'Ä', 'ä', 'b', 'z', 'Z', 'ö', 'ø', 'å', 'æ', 'ô', 'é', 'e', 'ch', 'c', 'h', 'll', 'ı', 'i', 'İ', 'I', 'ş', 's', 'ß', 'ss', 'ñ', 'n', 'w', 'v', 'th', 'þ', '10', '9', '2', 'x1', 'x10', 'x2', '中', '日', '本', '한', 'あ', 'ア', 'ก', 'ข', 'а', 'я', 'ё', 'е', 'α', 'ω', 'א', 'ת', 'ب', 'ا', 'क', 'ख', '-', ' ', '', 'Ab', 'ab', 'aB', 'résumé', 'resume', 'Resume', 'coop', 'co-op', 'côte', 'coté', 'cote', 'côté', 'ǆ', 'ﬁ', 'fi'];
  var TEXTS = ['Hello, world! How are you?', 'The quick (“brown”) fox can’t jump 32.3 feet, right?', '東京都に住んでいます。今日は良い天気です。', '我爱北京天安门。你好吗？', 'ภาษาไทยง่ายนิดเดียว', 'Ça va? Très bien. Mr. Smith arrived.', 'नमस्ते दुनिया। कैसे हो?', 'مرحبا بالعالم. كيف حالك؟', '👨‍👩‍👧‍👦🇸🇪e\u0301a\u0308 क्षि', 'שלום עולם. מה שלומך?', 'Привет, мир! 3.14 — это число.', '안녕하세요 세계. 잘 지내요?'];
  var CASE_SAMPLE = ['istanbul İSTANBUL ıi', 'ΌΣΟΣ ΣΊΣΥΦΟΣ ΐΰ άέ', 'straße ǆ ǅ ǈ ﬁ ŉ', 'LİTHUANIAN i̇̀ Ì Í Ĩ', 'ĲSSELMEER ĳsselmeer', 'ǰ ẖ ẗ ẘ ẙ ẚ', 'ᾈ ᾳ ῼ ᾀ', 'ΑΣ. ΑΣ', 'Ԁ ꙁ Ꞵ ꞵ Ᲊ 𐐀 𐐨 𞤀', 'ÀÉÎÕÜ àéîõü', 'ЁЖИК ёжик', 'ΆΈΉΊΌΎΏ', 'Ⓐ ⓐ Ⅻ ⅻ'];
  var NORM_SAMPLE = ['é', 'e\u0301', 'Å', 'Å', 'ﬁ', '①', '가', '\u1100\u1161', 'ẛ̣', 'Ω', 'ｶ', 'ｶﾞ', 'ḍ̇', '\u0958', '𝐀', 'ǅ', 'ﷺ', 'q\u0307\u0323', '\u0344', 'ﾟ', 'ᄀ\u1161\u11a8'];

  function date(r) { return r.pick(DATES); }
  function zone(r) { return r.pick(ZONES); }
  function num(r) { return r.pick(NUMBERS); }

  // areas: name -> function (locale, r) returning [label, thunk]. The label
  // names the call (its options as JSON), the thunk answers a string.
  var areas = {};

  function nf(locale, o, x, how) {
    var f = new Intl.NumberFormat(locale, o);
    if (how === 'parts') return parts(f.formatToParts(x));
    if (how === 'resolved') return sortedJSON(f.resolvedOptions());
    return f.format(x);
  }
  function nfCase(spec, nums) {
    return function (locale, r) {
      var o = opts(r, spec);
      var x = nums ? r.pick(nums) : num(r);
      var how = r.pick(['format', 'format', 'format', 'parts']);
      return [JSON.stringify(o) + ' ' + how + ' ' + String(x), function () { return nf(locale, o, x, how); }];
    };
  }
  areas['NumberFormat/decimal'] = nfCase({
    minimumFractionDigits: [U, 0, 2, 3], maximumFractionDigits: [U, 3, 5], useGrouping: [U, false, 'min2', 'always'],
    minimumIntegerDigits: [U, 3], maximumSignificantDigits: [U, U, 2, 5], roundingMode: [U, U, 'floor', 'halfEven'], numberingSystem: [U, U, U, 'arab', 'deva', 'thai', 'hanidec'],
  });
  areas['NumberFormat/percent'] = nfCase({ style: ['percent'], minimumFractionDigits: [U, 1], signDisplay: [U, 'always'] }, [0, 0.5, 0.1234, -0.25, 1, 12.345]);
  areas['NumberFormat/currency'] = nfCase({
    style: ['currency'], currency: CURRENCIES, currencyDisplay: [U, 'code', 'name', 'narrowSymbol', 'symbol'], currencySign: [U, 'accounting'],
    maximumFractionDigits: [U, U, 0],
  });
  areas['NumberFormat/unit'] = nfCase({ style: ['unit'], unit: UNITS, unitDisplay: [U, 'long', 'short', 'narrow'] });
  areas['NumberFormat/compact'] = nfCase({ notation: ['compact'], compactDisplay: [U, 'long', 'short'], maximumFractionDigits: [U, U, 2] },
    [0, 1, 999, 1000, 1234, 1500, 9999, 12345, 99999, 123456, 1234567, 21000000, 123456789, 1.2e9, 9.87e12, 1e15, -4321, 1e20]);
  areas['NumberFormat/notation'] = nfCase({ notation: ['scientific', 'engineering'], maximumFractionDigits: [U, 2], style: [U, 'percent'] });
  areas['NumberFormat/signDisplay'] = nfCase({ signDisplay: ['auto', 'always', 'never', 'exceptZero', 'negative'], style: [U, 'currency'], currency: ['EUR'], currencySign: [U, 'accounting'] },
    [0, -0, 1, -1, 0.001, -0.001, 5.5, -5.5, NaN]);
  areas['NumberFormat/formatRange'] = function (locale, r) {
    var o = opts(r, { style: [U, 'currency', 'percent', 'unit'], maximumFractionDigits: [U, 0] });
    if (o.style === 'currency') o.currency = r.pick(['USD', 'EUR', 'JPY']);
    if (o.style === 'unit') o.unit = r.pick(['kilometer', 'hour', 'celsius']);
    var a = r.pick([1, 3, 5, 1000, 0.5, -2]), b = a + r.pick([0, 1, 2.5, 1000]);
    return [JSON.stringify(o) + ' ' + a + '-' + b, function () { return new Intl.NumberFormat(locale, o).formatRange(a, b); }];
  };
  areas['NumberFormat/resolvedOptions'] = function (locale, r) {
    var o = opts(r, { style: [U, 'currency', 'percent'], notation: [U, 'compact', 'scientific'], numberingSystem: [U, 'latn'] });
    if (o.style === 'currency') o.currency = 'EUR';
    return [JSON.stringify(o), function () { return nf(locale, o, 0, 'resolved'); }];
  };

  function dtf(locale, o, d, how, d2) {
    var f = new Intl.DateTimeFormat(locale, o);
    if (how === 'parts') return parts(f.formatToParts(d));
    if (how === 'range') return f.formatRange(d, d2);
    if (how === 'rangeParts') return parts(f.formatRangeToParts(d, d2));
    if (how === 'resolved') return sortedJSON(f.resolvedOptions());
    return f.format(d);
  }
  // Styles and components do not mix (a TypeError): a style wins.
  function dtfOpts(r, spec) {
    var o = opts(r, spec);
    if (o.dateStyle || o.timeStyle) ['weekday', 'era', 'year', 'month', 'day', 'hour', 'minute', 'second', 'timeZoneName'].forEach(function (k) { delete o[k]; });
    return o;
  }
  function dtfCase(spec, hows) {
    return function (locale, r) {
      var o = dtfOpts(r, spec);
      o.timeZone = o.timeZone || zone(r);
      var d = date(r), how = r.pick(hows || ['format', 'format', 'parts']);
      return [JSON.stringify(o) + ' ' + how + ' ' + new Date(d).toISOString(), function () { return dtf(locale, o, d, how); }];
    };
  }
  areas['DateTimeFormat/style'] = dtfCase({ dateStyle: [U, 'full', 'long', 'medium', 'short'], timeStyle: [U, 'full', 'long', 'medium', 'short'] });
  areas['DateTimeFormat/components'] = function (locale, r) {
    var o = opts(r, {
      weekday: [U, U, 'long', 'short', 'narrow'], era: [U, U, U, 'short', 'long'], year: [U, 'numeric', '2-digit'], month: [U, 'numeric', '2-digit', 'long', 'short', 'narrow'],
      day: [U, 'numeric', '2-digit'], hour: [U, U, 'numeric', '2-digit'], minute: [U, U, 'numeric', '2-digit'], second: [U, U, U, 'numeric'],
      fractionalSecondDigits: [U, U, U, U, 3], timeZoneName: [U, U, U, 'short', 'long', 'shortOffset', 'longGeneric'], dayPeriod: [U, U, U, U, U, 'short'],
    });
    o.timeZone = zone(r);
    var d = date(r), how = r.pick(['format', 'format', 'parts']);
    // Node 20.20.2 aborts (V8_Fatal "unreachable code") in formatToParts
    // of some patterns with an era (de-CH weekday, era, year, month, day,
    // minute): an era is formatted only.
    if (o.era) how = 'format';
    return [JSON.stringify(o) + ' ' + how + ' ' + new Date(d).toISOString(), function () { return dtf(locale, o, d, how); }];
  };
  areas['DateTimeFormat/hourCycle'] = dtfCase({ hour: ['numeric', '2-digit'], minute: [U, '2-digit'], hourCycle: [U, 'h11', 'h12', 'h23', 'h24'], hour12: [U, U, true, false], timeStyle: [U], weekday: [U, U, 'short'], timeZoneName: [U, U, 'short'] });
  areas['DateTimeFormat/timeStyle+hourCycle'] = dtfCase({ timeStyle: ['short', 'medium', 'long'], hourCycle: ['h11', 'h12', 'h23', 'h24'] });
  areas['DateTimeFormat/timeZone'] = dtfCase({ timeZone: ZONES.concat(['America/Los_Angeles', 'Asia/Kathmandu', 'Europe/Kyiv', 'Asia/Calcutta', 'US/Pacific']), timeZoneName: ['short', 'long', 'shortOffset', 'longOffset', 'shortGeneric', 'longGeneric'], hour: [U, 'numeric'] });
  areas['DateTimeFormat/calendar'] = dtfCase({ calendar: ['gregory', 'buddhist', 'japanese', 'islamic-umalqura', 'islamic', 'persian', 'hebrew', 'chinese', 'indian', 'roc', 'ethiopic', 'coptic', 'iso8601'], dateStyle: [U, 'full', 'long', 'short'], year: [U, 'numeric'], month: [U, 'long'], era: [U, U, 'short'] });
  areas['DateTimeFormat/defaultCalendar'] = dtfCase({ dateStyle: [U, 'long', 'medium'], year: [U, 'numeric'] }, ['format', 'resolved']);
  areas['DateTimeFormat/formatRange'] = function (locale, r) {
    var o = dtfOpts(r, {
      dateStyle: [U, U, 'medium', 'long'], year: [U, 'numeric'], month: [U, 'short', 'long', 'numeric'], day: [U, 'numeric'], hour: [U, 'numeric'], minute: [U, '2-digit'], weekday: [U, U, 'short'],
    });
    o.timeZone = zone(r);
    var d = date(r), d2 = d + r.pick([3600e3 * 2, 86400e3, 86400e3 * 4, 86400e3 * 40, 86400e3 * 400, 60e3 * 20]);
    var how = r.pick(['range', 'range', 'rangeParts']);
    return [JSON.stringify(o) + ' ' + how + ' ' + new Date(d).toISOString() + '/' + new Date(d2).toISOString(), function () { return dtf(locale, o, d, how, d2); }];
  };
  areas['DateTimeFormat/resolvedOptions'] = dtfCase({ dateStyle: [U, 'short'], hour: [U, 'numeric'], hour12: [U, false], month: [U, 'long'] }, ['resolved']);

  areas['PluralRules/cardinal'] = function (locale, r) {
    var o = opts(r, { minimumFractionDigits: [U, U, 1], maximumSignificantDigits: [U, U, 2] });
    var x = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 19, 20, 21, 22, 100, 101, 102, 1000000, 0.5, 1.5, 2.25, 1.0, 0.1, 1000, 1e6]);
    return [JSON.stringify(o) + ' ' + x, function () { return new Intl.PluralRules(locale, o).select(x); }];
  };
  areas['PluralRules/ordinal'] = function (locale, r) {
    var x = r.pick([0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 13, 21, 22, 23, 100, 101, 111, 1000]);
    return ['ordinal ' + x, function () { return new Intl.PluralRules(locale, { type: 'ordinal' }).select(x); }];
  };
  areas['PluralRules/categories'] = function (locale, r) {
    var t = r.pick(['cardinal', 'ordinal']);
    return [t, function () { return new Intl.PluralRules(locale, { type: t }).resolvedOptions().pluralCategories.join(' '); }];
  };
  areas['RelativeTimeFormat'] = function (locale, r) {
    var o = opts(r, { numeric: [U, 'always', 'auto'], style: [U, 'long', 'short', 'narrow'] });
    var unit = r.pick(['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year', 'days', 'years']);
    var v = r.pick([-2, -1, 0, 1, 2, 3, 5, 11, 21, -0, 1.5, -100, 1000]);
    var how = r.pick(['format', 'format', 'parts']);
    return [JSON.stringify(o) + ' ' + how + ' ' + v + ' ' + unit, function () {
      var f = new Intl.RelativeTimeFormat(locale, o);
      return how === 'parts' ? parts(f.formatToParts(v, unit)) : f.format(v, unit);
    }];
  };
  areas['ListFormat'] = function (locale, r) {
    var o = opts(r, { type: [U, 'conjunction', 'disjunction', 'unit'], style: [U, 'long', 'short', 'narrow'] });
    var xs = r.pick([[], ['A'], ['A', 'B'], ['A', 'B', 'C'], ['1', '2', '3', '4'], ['8', 'eleven', 'y']]);
    return [JSON.stringify(o) + ' ' + JSON.stringify(xs), function () { return new Intl.ListFormat(locale, o).format(xs); }];
  };
  areas['DisplayNames'] = function (locale, r) {
    var type = r.pick(['language', 'region', 'script', 'currency', 'calendar', 'dateTimeField']);
    var codes = {
      language: ['en', 'en-US', 'en-GB', 'zh-Hans', 'zh-Hant-TW', 'pt-BR', 'fr-CA', 'de', 'ar', 'sr-Latn', 'nan', 'xx', 'es-419'],
      region: ['US', 'DE', 'CN', 'TW', 'HK', 'EG', '419', 'EU', 'UN', 'MK', 'CI', 'ZZ'],
      script: ['Latn', 'Cyrl', 'Arab', 'Hans', 'Hant', 'Deva', 'Thai', 'Zyyy'],
      currency: ['USD', 'EUR', 'JPY', 'EGP', 'XXX', 'TRY', 'CNY', 'AAA'],
      calendar: ['gregory', 'buddhist', 'islamic-umalqura', 'japanese', 'persian', 'chinese', 'iso8601', 'roc'],
      dateTimeField: ['era', 'year', 'quarter', 'month', 'weekOfYear', 'weekday', 'day', 'dayPeriod', 'hour', 'minute', 'second', 'timeZoneName'],
    }[type];
    var o = opts(r, { style: [U, 'long', 'short', 'narrow'], fallback: [U, U, 'none'], languageDisplay: [U, U, 'standard'] });
    o.type = type;
    if (type !== 'language') delete o.languageDisplay;
    var code = r.pick(codes);
    return [JSON.stringify(o) + ' ' + code, function () { return String(new Intl.DisplayNames(locale, o).of(code)); }];
  };
  areas['Collator/compare'] = function (locale, r) {
    var o = opts(r, { sensitivity: [U, 'base', 'accent', 'case', 'variant'], numeric: [U, true], caseFirst: [U, 'upper', 'lower'], ignorePunctuation: [U, U, true], usage: [U, U, 'search'] });
    var words = [];
    for (var i = 0; i < 8; i++) words.push(r.pick(WORDS));
    return [JSON.stringify(o) + ' ' + JSON.stringify(words), function () {
      var c = new Intl.Collator(locale, o);
      var cmp = [];
      for (var i = 0; i + 1 < words.length; i += 2) cmp.push(c.compare(words[i], words[i + 1]));
      return cmp.join(',') + ' ' + words.slice().sort(c.compare).join(',');
    }];
  };
  areas['Collator/resolvedOptions'] = function (locale, r) {
    var o = opts(r, { sensitivity: [U, 'base'], numeric: [U, true], usage: [U, 'search'] });
    return [JSON.stringify(o), function () { return sortedJSON(new Intl.Collator(locale, o).resolvedOptions()); }];
  };
  areas['Segmenter'] = function (locale, r) {
    var gran = r.pick(['grapheme', 'word', 'sentence']), text = r.pick(TEXTS);
    return [gran + ' ' + JSON.stringify(text), function () {
      var out = [], it = new Intl.Segmenter(locale, { granularity: gran }).segment(text)[Symbol.iterator](), s;
      while (!(s = it.next()).done) out.push(s.value.segment + (gran === 'word' ? (s.value.isWordLike ? '+' : '-') : ''));
      return out.join('|');
    }];
  };
  areas['Locale'] = function (locale, r) {
    var ext = r.pick(['', '-u-ca-buddhist', '-u-hc-h23', '-u-nu-arab', '-u-co-phonebk-kn', '-u-kf-upper']);
    var how = r.pick(['maximize', 'minimize', 'info', 'string']);
    var tag = locale === 'und' ? 'und' + ext : locale + ext;
    return [how + ' ' + tag, function () {
      var l = new Intl.Locale(tag);
      if (how === 'maximize') return l.maximize().toString();
      if (how === 'minimize') return l.minimize().toString();
      if (how === 'info') return [l.baseName, l.language, l.script, l.region, l.calendar, l.hourCycle, l.numberingSystem, l.collation, l.numeric, l.caseFirst].join(' ');
      return l.toString();
    }];
  };
  areas['getCanonicalLocales'] = function (locale, r) {
    var tags = [locale, locale.toLowerCase(), locale.replace('-', '_'), 'iw', 'in-ID', 'zh-hant-tw', 'EN-us-u-CA-gregory', 'sgn-GR', 'de-DE-1996', 'x-private', 'en-u-foo-bar-nu-thai', 'art-lojban'];
    var t = r.pick(tags);
    return [JSON.stringify(t), function () { return Intl.getCanonicalLocales(t).join(','); }];
  };
  areas['supportedValuesOf'] = function (locale, r) {
    var k = r.pick(['calendar', 'collation', 'currency', 'numberingSystem', 'timeZone', 'unit']);
    return [k, function () { var v = Intl.supportedValuesOf(k); return v.length + ' ' + v.slice(0, 12).join(','); }];
  };
  areas['supportedLocalesOf'] = function (locale, r) {
    var C = r.pick(['NumberFormat', 'DateTimeFormat', 'Collator', 'PluralRules', 'Segmenter', 'DisplayNames', 'ListFormat', 'RelativeTimeFormat']);
    return [C, function () { return Intl[C].supportedLocalesOf([locale, 'xx-XX', locale + '-u-ca-gregory']).join(','); }];
  };

  areas['Number.toLocaleString'] = function (locale, r) {
    var o = opts(r, { style: [U, U, 'currency', 'percent', 'unit'], maximumFractionDigits: [U, 0, 2], notation: [U, U, U, 'compact'] });
    if (o.style === 'currency') o.currency = r.pick(CURRENCIES);
    if (o.style === 'unit') o.unit = r.pick(UNITS);
    var x = num(r);
    return [JSON.stringify(o) + ' ' + x, function () { return x.toLocaleString(locale, o); }];
  };
  areas['BigInt.toLocaleString'] = function (locale, r) {
    var s = r.pick(['0', '-1', '1234567', '123456789012345678901234567890', '-98765432109876543210']);
    var o = opts(r, { style: [U, 'currency', 'percent'], notation: [U, U, 'compact', 'scientific'], useGrouping: [U, U, false] });
    if (o.style === 'currency') o.currency = r.pick(['USD', 'EUR', 'JPY']);
    return [JSON.stringify(o) + ' ' + s, function () { return BigInt(s).toLocaleString(locale, o); }];
  };
  areas['Date.toLocaleString'] = function (locale, r) {
    var m = r.pick(['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']);
    var o = dtfOpts(r, { weekday: [U, U, 'long'], month: [U, U, 'short'], hour12: [U, U, false], timeZoneName: [U, U, 'short'], dateStyle: [U, U, U, 'medium'] });
    if (o.dateStyle && m === 'toLocaleTimeString') delete o.dateStyle;
    o.timeZone = zone(r);
    var d = date(r);
    return [m + ' ' + JSON.stringify(o) + ' ' + new Date(d).toISOString(), function () { return new Date(d)[m](locale, o); }];
  };
  areas['Array.toLocaleString'] = function (locale, r) {
    var xs = [num(r), num(r), r.pick(['x', null, undefined]), new Date(date(r))];
    var o = { timeZone: zone(r), maximumFractionDigits: r.pick([U, 1]) };
    return [JSON.stringify(xs) + ' ' + JSON.stringify(o), function () { return xs.toLocaleString(locale, o); }];
  };
  areas['String.localeCompare'] = function (locale, r) {
    var a = r.pick(WORDS), b = r.pick(WORDS);
    var o = opts(r, { sensitivity: [U, U, 'base', 'accent'], numeric: [U, U, true] });
    return [JSON.stringify([a, b]) + ' ' + JSON.stringify(o), function () { return String(a.localeCompare(b, locale, o)); }];
  };
  areas['String.toLocaleCase'] = function (locale, r) {
    var s = r.pick(CASE_SAMPLE), m = r.pick(['toLocaleUpperCase', 'toLocaleLowerCase']);
    return [m + ' ' + JSON.stringify(s), function () { return s[m](locale); }];
  };
  // Locale-independent: answered in 'und' only.
  areas['String.normalize'] = function (locale, r) {
    var s = r.pick(NORM_SAMPLE), f = r.pick(['NFC', 'NFD', 'NFKC', 'NFKD']);
    return [f + ' ' + JSON.stringify(s), function () { return JSON.stringify(s.normalize(f)).replace(/[^\x20-\x7e]/g, function (c) { return '\\u' + ('000' + c.charCodeAt(0).toString(16)).slice(-4); }); }];
  };
  areas['String.case'] = function (locale, r) {
    var s = r.pick(CASE_SAMPLE), m = r.pick(['toUpperCase', 'toLowerCase']);
    return [m + ' ' + JSON.stringify(s), function () { return s[m](); }];
  };
  var LOCALE_FREE = { 'String.normalize': true, 'String.case': true, supportedValuesOf: true };

  function answer(thunk) {
    try {
      var v = thunk();
      return typeof v === 'string' ? v : '?' + typeof v + ':' + String(v);
    } catch (e) {
      return '!' + (e && e.name);
    }
  }

  function run(locale, perArea) {
    var out = {};
    Object.keys(areas).forEach(function (area) {
      // 'und' answers the locale-free areas only: what V8 makes of 'und'
      // elsewhere depends on the process's default locale.
      if (!!LOCALE_FREE[area] !== (locale === 'und')) return;
      var r = rng(SEED + ' ' + area + ' ' + locale);
      for (var i = 0; i < perArea; i++) {
        var c = areas[area](locale, r);
        var key = area + ' ' + locale + ' ' + c[0];
        if (g.intlDiffTrace) g.intlDiffTrace(key);
        if (!(key in out)) out[key] = answer(c[1]);
      }
    });
    return JSON.stringify(out);
  }

  g.intlDiff = { locales: LOCALES, areas: Object.keys(areas), run: run };
})(typeof globalThis !== 'undefined' ? globalThis : this);

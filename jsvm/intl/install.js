// Intl's installer for the pure-Go engines (goja, quickjs), run in each of
// their runtimes before env.js (bridge.js, through host.intlInstaller): the
// node engine's runtimes have Node's own Intl and never receive it.
//
// Intl is gorender's (jsvm/intl: the FormatJS polyfills with CLDR data,
// collation, case mapping and time zones in Go), built in this runtime the
// first time the page touches an Intl member or a locale-aware built-in: a
// page that never does pays nothing. The program is compiled once per
// process (host.intlLoad runs it here and returns its install function);
// a locale's data is loaded the first time it is used, and its large tables
// stay in Go, shared by every runtime (data.go, tables.go).
//
// A script whose completion value is a function of the host object (built
// by bridge.js): intlLoad(), intlLocaleData(kind, file),
// intlLocaleKeys(kind, file, path), intlLocaleEntry(kind, file, path, key),
// intlZoneOffset(zone, ms), intlDefaultTimeZone(), intlDefaultLocale(),
// intlCollate(locale, sensitivity, caseFirst, numeric, ignorePunctuation, a,
// b), intlCaseMap(language, text, upper); engine (name).
(function (host) {
  'use strict';
  var g = globalThis;
  if (typeof g.Intl === 'undefined') installLazyIntl();

  function installLazyIntl() {
    var Intl = {};
    var members = ['Collator', 'DateTimeFormat', 'DisplayNames', 'ListFormat', 'Locale', 'NumberFormat', 'PluralRules',
      'RelativeTimeFormat', 'Segmenter', 'getCanonicalLocales', 'supportedValuesOf'];
    var state = { loaded: false, loading: false, failed: null };
    function loadIntl() {
      if (state.loaded) return;
      if (state.failed) throw state.failed;
      if (state.loading) throw new Error('Intl is being built: a locale-aware call cannot run while it loads');
      state.loading = true;
      try {
        members.forEach(function (name) { delete Intl[name]; });
        var install = host.intlLoad();
        install({
          localeData: host.intlLocaleData,
          localeKeys: host.intlLocaleKeys,
          localeEntry: host.intlLocaleEntry,
          zoneOffset: host.intlZoneOffset,
          defaultTimeZone: host.intlDefaultTimeZone,
          defaultLocale: host.intlDefaultLocale,
          collate: host.intlCollate,
        });
        state.loaded = true;
      } catch (e) {
        state.failed = new Error('Intl could not be built in gorender (' + host.engine + ' engine): ' + (e && e.message));
        throw state.failed;
      } finally {
        state.loading = false;
      }
    }
    members.forEach(function (name) {
      Object.defineProperty(Intl, name, {
        configurable: true,
        enumerable: false,
        get: function () { loadIntl(); return Intl[name]; },
        set: function (v) { loadIntl(); Intl[name] = v; },
      });
    });
    Object.defineProperty(Intl, Symbol.toStringTag, { value: 'Intl', configurable: true });
    Object.defineProperty(g, 'Intl', { value: Intl, writable: true, configurable: true });

    // The locale-aware built-ins load Intl, which replaces them, and call
    // the replacement.
    function define(proto, name, fn) {
      Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true });
    }
    function viaIntl(proto, name) {
      var stub = function () {
        loadIntl();
        var real = proto[name];
        if (real === stub) throw new Error('Intl did not define ' + name);
        return real.apply(this, arguments);
      };
      Object.defineProperty(stub, 'name', { value: name });
      Object.defineProperty(stub, 'length', { value: 0 });
      define(proto, name, stub);
    }
    viaIntl(Number.prototype, 'toLocaleString');
    if (typeof BigInt === 'function') viaIntl(BigInt.prototype, 'toLocaleString');
    viaIntl(Date.prototype, 'toLocaleString');
    viaIntl(Date.prototype, 'toLocaleDateString');
    viaIntl(Date.prototype, 'toLocaleTimeString');
    viaIntl(String.prototype, 'localeCompare');

    // Array.prototype.toLocaleString passes its arguments to each element's
    // toLocaleString (ECMA-402 section 19.5.1), which the engines do not.
    define(Array.prototype, 'toLocaleString', function toLocaleString(locales, options) {
      var o = Object(this);
      var len = o.length >>> 0;
      var out = '';
      for (var i = 0; i < len; i++) {
        if (i > 0) out += ',';
        var v = o[i];
        if (v !== undefined && v !== null) out += String(v.toLocaleString(locales, options));
      }
      return out;
    });

    // Case mapping needs no Intl: Go maps it for the language (Turkish and
    // Azeri dotted i, Lithuanian, Greek), as ICU does.
    function caseLanguage(locales) {
      var l = locales;
      if (Array.isArray(l)) l = l[0];
      if (l === undefined) l = host.intlDefaultLocale();
      l = String(l);
      if (!/^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$/.test(l)) throw new RangeError('Incorrect locale information provided');
      return l.split(/[-_]/)[0].toLowerCase();
    }
    define(String.prototype, 'toLocaleUpperCase', function toLocaleUpperCase(locales) {
      if (this === null || this === undefined) throw new TypeError('String.prototype.toLocaleUpperCase called on null or undefined');
      return host.intlCaseMap(caseLanguage(locales), String(this), true);
    });
    define(String.prototype, 'toLocaleLowerCase', function toLocaleLowerCase(locales) {
      if (this === null || this === undefined) throw new TypeError('String.prototype.toLocaleLowerCase called on null or undefined');
      return host.intlCaseMap(caseLanguage(locales), String(this), false);
    });
  }
})

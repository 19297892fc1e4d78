// The matrix: every library's cases run in each of these locales. A case is
// a function of the locale that returns a string; a case that throws records
// the error's constructor name (V8's error texts are not part of the
// contract).
export const LOCALES = [
  'en-US', 'en-GB', 'en-IN', 'de-DE', 'fr-FR', 'es-ES', 'es-MX', 'pt-BR', 'it-IT', 'nl-NL', 'sv-SE', 'pl-PL',
  'ru-RU', 'uk-UA', 'tr-TR', 'ar', 'ar-EG', 'he-IL', 'hi-IN', 'ja-JP', 'zh-CN', 'zh-TW', 'ko-KR',
];

// Fixed instants: nothing depends on the day the matrix runs.
export const T = Date.UTC(2024, 2, 5, 14, 7, 9, 123); // Tue 2024-03-05 14:07:09.123 UTC
export const SUMMER = Date.UTC(2024, 6, 5, 14, 7, 9); // in daylight saving time in the north

export function install(name, cases) {
  const g = globalThis;
  g.intlMatrix = g.intlMatrix || {};
  g.intlMatrix[name] = function run(locale) {
    const out = {};
    for (const key of Object.keys(cases)) {
      try {
        out[key] = String(cases[key](locale));
      } catch (e) {
        out[key] = 'THROW ' + (e && e.constructor && e.constructor.name);
      }
    }
    return JSON.stringify(out);
  };
}

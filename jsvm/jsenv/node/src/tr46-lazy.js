'use strict';
// tr46 for whatwg-url, loaded lazily: an ASCII host without punycode labels
// only needs lower-casing under UTS #46 (non-strict), so the real tr46 and
// its 280 KB mapping table are evaluated only for other hosts.

var real = null;
function tr46() { return real || (real = require('tr46/index.js')); }

function simple(domain, options) {
  return !(options && (options.useSTD3ASCIIRules || options.verifyDNSLength)) &&
    /^[\x00-\x7F]*$/.test(domain) && !/(^|\.)xn--/i.test(domain);
}

module.exports = {
  toASCII: function (domain, options) {
    if (simple(domain, options)) return domain.toLowerCase();
    return tr46().toASCII(domain, options);
  },
  toUnicode: function (domain, options) {
    if (simple(domain, options)) return { domain: domain.toLowerCase(), error: false };
    return tr46().toUnicode(domain, options);
  },
};

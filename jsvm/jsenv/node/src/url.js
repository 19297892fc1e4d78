'use strict';
// url: WHATWG URL and URLSearchParams (whatwg-url, the reference
// implementation), the legacy parse/format/resolve (url), and the file URL
// helpers.

var whatwg = require('whatwg-url');
var legacy = require('url/');
var errors = require('./errors');

var URL = whatwg.URL;
var URLSearchParams = whatwg.URLSearchParams;

function fileURLToPath(u) {
  if (typeof u === 'string') u = new URL(u);
  else if (!u || typeof u.href !== 'string') throw errors.invalidArgType('path', 'of type string or an instance of URL', u);
  if (u.protocol !== 'file:') throw errors.withCode(new TypeError('The URL must be of scheme file'), 'ERR_INVALID_URL_SCHEME');
  if (u.hostname !== '' && u.hostname !== 'localhost') {
    throw errors.withCode(new TypeError('File URL host must be "localhost" or empty on linux'), 'ERR_INVALID_FILE_URL_HOST');
  }
  var pathname = u.pathname;
  for (var i = 0; i < pathname.length; i++) {
    if (pathname[i] === '%') {
      var third = pathname.codePointAt(i + 2) | 0x20;
      if (pathname[i + 1] === '2' && third === 102) {
        throw errors.withCode(new TypeError('File URL path must not include encoded / characters'), 'ERR_INVALID_FILE_URL_PATH');
      }
    }
  }
  return decodeURIComponent(pathname);
}

function pathToFileURL(filepath) {
  var path = require('path-browserify');
  var resolved = path.resolve(filepath);
  if (filepath.charCodeAt(filepath.length - 1) === 47 && resolved[resolved.length - 1] !== '/') resolved += '/';
  var u = new URL('file://');
  u.pathname = resolved.replace(/%/g, '%25').replace(/\\/g, '%5C').replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/\t/g, '%09');
  return u;
}

function format(u, options) {
  if (u && typeof u === 'object' && u instanceof URL) {
    var href = u.href;
    if (options && typeof options === 'object') {
      var c = new URL(href);
      if (options.fragment === false) c.hash = '';
      if (options.search === false) c.search = '';
      if (options.auth === false) { c.username = ''; c.password = ''; }
      href = c.href;
    }
    return href;
  }
  return legacy.format(u);
}

function domainToASCII(domain) {
  try { return new URL('ws://' + domain).hostname; } catch (e) { return ''; }
}

function urlToHttpOptions(u) {
  var o = {
    protocol: u.protocol,
    hostname: typeof u.hostname === 'string' && u.hostname.charAt(0) === '[' ? u.hostname.slice(1, -1) : u.hostname,
    hash: u.hash, search: u.search, pathname: u.pathname, path: (u.pathname || '') + (u.search || ''), href: u.href,
  };
  if (u.port !== '') o.port = Number(u.port);
  if (u.username || u.password) o.auth = decodeURIComponent(u.username) + ':' + decodeURIComponent(u.password);
  return o;
}

module.exports = {
  URL: URL,
  URLSearchParams: URLSearchParams,
  Url: legacy.Url,
  parse: legacy.parse,
  resolve: legacy.resolve,
  resolveObject: legacy.resolveObject,
  format: format,
  fileURLToPath: fileURLToPath,
  pathToFileURL: pathToFileURL,
  domainToASCII: domainToASCII,
  domainToUnicode: function (d) { return String(d); },
  urlToHttpOptions: urlToHttpOptions,
};

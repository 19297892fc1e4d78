'use strict';
// fs: read-only and confined to the bundle's own directory (companion files
// such as loadable-stats.json). The host resolves every path, symlinks
// included, and answers ENOENT for anything outside; writes fail with EROFS.

var state = require('./state');
var errors = require('./errors');

var host = state.host;

function bufferModule() { return require('./buffer'); }

function toPath(p, name) {
  name = name || 'path';
  if (typeof p === 'string') {
    // ok
  } else if (p && typeof p === 'object' && typeof p.href === 'string' && p.protocol !== undefined) {
    p = require('./url').fileURLToPath(p);
  } else if (p instanceof Uint8Array) {
    p = bufferModule().Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('utf8');
  } else {
    throw errors.invalidArgType(name, 'of type string or an instance of Buffer or URL', p);
  }
  if (p.indexOf('\u0000') !== -1) {
    throw errors.withCode(new TypeError("The argument '" + name + "' must be a string, Uint8Array, or URL without null bytes. Received " +
      JSON.stringify(p).replace(/^"|"$/g, "'")), 'ERR_INVALID_ARG_VALUE');
  }
  return p;
}

function encodingOf(options) {
  if (typeof options === 'string') return options;
  if (options && typeof options === 'object') return options.encoding || null;
  return null;
}

function flagOf(options) {
  return options && typeof options === 'object' && options.flag ? String(options.flag) : 'r';
}

// shown is a path as an fs error names it, as the host names the paths of
// its own errors: an absolute path relative to the bundle's directory
// (process.cwd(), so it still names the same file), so that a 400 answer
// carrying the error never names the server's cache path (PROTOCOL.md §5).
function shown(p) {
  if (!state.dirname || p.charAt(0) !== '/') return p;
  return require('path-browserify').relative(state.dirname, p) || '.';
}

function erofs(syscall, path) {
  var p = typeof path === 'string' ? shown(path) : String(path);
  var err = new Error('EROFS: read-only file system, ' + syscall + " '" + p + "'");
  err.errno = -30;
  err.code = 'EROFS';
  err.syscall = syscall;
  err.path = p;
  return err;
}

function readFileSync(path, options) {
  if (typeof path === 'number') throw erofs('read', 'fd ' + path);
  var p = toPath(path);
  var flag = flagOf(options);
  if (flag !== 'r' && flag !== 'rs' && flag !== 'sr') throw erofs('open', p);
  var encoding = encodingOf(options);
  if (encoding === 'utf8' || encoding === 'utf-8') return host.fsReadText(p);
  var b = bufferModule().Buffer.from(host.fsRead(p));
  return encoding ? b.toString(encoding) : b;
}

function Stats(s) {
  // s = [isDir, size, mode, mtimeMs]
  this.dev = 0; this.mode = s[2]; this.nlink = 1; this.uid = 0; this.gid = 0; this.rdev = 0;
  this.blksize = 4096; this.ino = 0; this.size = s[1]; this.blocks = Math.ceil(s[1] / 512);
  this.atimeMs = s[3]; this.mtimeMs = s[3]; this.ctimeMs = s[3]; this.birthtimeMs = s[3];
  this.atime = new Date(s[3]); this.mtime = new Date(s[3]); this.ctime = new Date(s[3]); this.birthtime = new Date(s[3]);
  this._dir = s[0];
}
Stats.prototype.isFile = function () { return !this._dir; };
Stats.prototype.isDirectory = function () { return this._dir; };
Stats.prototype.isSymbolicLink = function () { return false; };
Stats.prototype.isBlockDevice = function () { return false; };
Stats.prototype.isCharacterDevice = function () { return false; };
Stats.prototype.isFIFO = function () { return false; };
Stats.prototype.isSocket = function () { return false; };

function statSync(path, options) {
  var p = toPath(path);
  try {
    return new Stats(host.fsStat(p));
  } catch (e) {
    if (options && options.throwIfNoEntry === false && e && e.code === 'ENOENT') return undefined;
    throw e;
  }
}

function existsSync(path) {
  try {
    host.fsStat(toPath(path));
    return true;
  } catch (e) {
    return false;
  }
}

function Dirent(name, isDir, dir) {
  this.name = name;
  this.parentPath = dir;
  this.path = dir;
  this._dir = isDir;
}
Dirent.prototype.isFile = function () { return !this._dir; };
Dirent.prototype.isDirectory = function () { return this._dir; };
Dirent.prototype.isSymbolicLink = function () { return false; };
Dirent.prototype.isBlockDevice = function () { return false; };
Dirent.prototype.isCharacterDevice = function () { return false; };
Dirent.prototype.isFIFO = function () { return false; };
Dirent.prototype.isSocket = function () { return false; };

function readdirSync(path, options) {
  var p = toPath(path);
  var entries = host.fsReaddir(p); // [[name, isDir], ...] sorted
  if (options && typeof options === 'object' && options.withFileTypes) {
    return entries.map(function (e) { return new Dirent(e[0], e[1], p); });
  }
  return entries.map(function (e) { return e[0]; });
}

function realpathSync(path) { return host.fsRealpath(toPath(path)); }
realpathSync.native = realpathSync;

var constants = {
  F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
  O_RDONLY: 0, O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_EXCL: 128, O_TRUNC: 512, O_APPEND: 1024,
  S_IFMT: 61440, S_IFREG: 32768, S_IFDIR: 16384, S_IFLNK: 40960,
  COPYFILE_EXCL: 1, COPYFILE_FICLONE: 2, COPYFILE_FICLONE_FORCE: 4,
};

function accessSync(path, mode) {
  var p = toPath(path);
  host.fsStat(p);
  if (mode & constants.W_OK) throw erofs('access', p);
}

var fs = {
  constants: constants,
  F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
  Stats: Stats,
  Dirent: Dirent,
  readFileSync: readFileSync,
  statSync: statSync,
  lstatSync: statSync,
  existsSync: existsSync,
  readdirSync: readdirSync,
  realpathSync: realpathSync,
  accessSync: accessSync,
};

// Writes: the bundle's file system is read-only.
[['writeFileSync', 'open'], ['appendFileSync', 'open'], ['mkdirSync', 'mkdir'], ['mkdtempSync', 'mkdtemp'],
  ['rmSync', 'rm'], ['rmdirSync', 'rmdir'], ['unlinkSync', 'unlink'], ['renameSync', 'rename'],
  ['copyFileSync', 'copyfile'], ['cpSync', 'cp'], ['symlinkSync', 'symlink'], ['linkSync', 'link'],
  ['chmodSync', 'chmod'], ['chownSync', 'chown'], ['utimesSync', 'utime'], ['truncateSync', 'open'],
  ['openSync', 'open'], ['writeSync', 'write'], ['createWriteStream', 'open']].forEach(function (pair) {
  fs[pair[0]] = function (path) {
    var p = typeof path === 'string' ? path : String(path);
    if (pair[0] === 'openSync' && (arguments[1] === undefined || arguments[1] === 'r')) {
      throw erofs('open', p + "' (gorender: file descriptors are not supported; use readFileSync");
    }
    throw erofs(pair[1], p);
  };
});

// Callback versions answer on a later tick, as Node does.
function later(cb, err, value) {
  require('./process').nextTick(function () { cb(err, value); });
}
function callbackify(syncFn, name) {
  return function () {
    var args = Array.prototype.slice.call(arguments);
    var cb = args.pop();
    if (typeof cb !== 'function') throw errors.invalidArgType('cb', 'of type function', cb);
    var value, err = null;
    try {
      value = syncFn.apply(null, args);
    } catch (e) {
      if (e && e.code && /^ERR_INVALID_ARG/.test(e.code)) throw e;
      err = e;
    }
    later(cb, err, value);
  };
}
function promisify(syncFn) {
  return function () {
    var args = arguments;
    return new Promise(function (resolve) { resolve(syncFn.apply(null, args)); });
  };
}

var syncNames = ['readFile', 'stat', 'lstat', 'readdir', 'realpath', 'access', 'writeFile', 'appendFile', 'mkdir',
  'mkdtemp', 'rm', 'rmdir', 'unlink', 'rename', 'copyFile', 'cp', 'symlink', 'link', 'chmod', 'chown', 'utimes',
  'truncate', 'open'];
var promises = {};
syncNames.forEach(function (name) {
  fs[name] = callbackify(fs[name + 'Sync'], name);
  promises[name] = promisify(fs[name + 'Sync']);
});
fs.realpath.native = fs.realpath;
fs.exists = function exists(path, cb) { require('./process').nextTick(function () { cb(existsSync(path)); }); };
promises.constants = constants;
fs.promises = promises;

fs.createReadStream = function createReadStream(path, options) {
  var Readable = require('./stream').Readable;
  var p = toPath(path);
  var encoding = encodingOf(options);
  var start = options && typeof options === 'object' && options.start !== undefined ? options.start : 0;
  var end = options && typeof options === 'object' && options.end !== undefined ? options.end + 1 : undefined;
  var hwm = (options && options.highWaterMark) || 65536;
  var data = null, pos = 0;
  var stream = new Readable({
    encoding: encoding || undefined,
    highWaterMark: hwm,
    read: function () {
      try {
        if (data === null) data = readFileSync(p).subarray(start, end);
      } catch (e) {
        this.destroy(e);
        return;
      }
      if (pos >= data.length) { this.push(null); return; }
      var chunk = data.subarray(pos, pos + hwm);
      pos += chunk.length;
      this.push(chunk);
    },
  });
  stream.path = p;
  return stream;
};

module.exports = fs;

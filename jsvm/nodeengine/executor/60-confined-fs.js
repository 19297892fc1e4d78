// confinedFS is the bundle's fs: Node's own, read-only and confined to the
// bundle's directory (companion files such as loadable-stats.json). A path
// is resolved lexically first, then with its symlinks, and must stay inside
// the directory both times (the bundle file itself may be a symlink into a
// snapshot directory); anything else is ENOENT, as if absent. Node's
// permission model bounds what the process may read at all (the bundle
// cache), whatever this layer says.
function confinedFS(bundle) {
  if (bundle.fs) return bundle.fs;
  const dir = bundle.dirname ? nodePath.resolve(bundle.dirname) : '';
  let realDir = '';
  let bundleReal = '';
  if (dir) {
    try { realDir = fs.realpathSync(dir); } catch (e) { /* absent */ }
    try { bundleReal = fs.realpathSync(nodePath.resolve(bundle.filename)); } catch (e) { /* absent */ }
  }
  const within = (p, d) => d !== '' && (p === d || p.startsWith(d.endsWith('/') ? d : d + '/'));
  const ERRNO = { ENOENT: [-2, 'no such file or directory'], EISDIR: [-21, 'illegal operation on a directory'],
    ENOTDIR: [-20, 'not a directory'], EROFS: [-30, 'read-only file system'], EACCES: [-13, 'permission denied'] };
  // shown is a path as an error names it, as the other engines do: an
  // absolute path relative to the bundle's directory (process.cwd(), so it
  // names the same file), so that a 400 answer carrying the error never
  // names the server's cache path (PROTOCOL.md §5).
  function shown(p) {
    if (!dir || !nodePath.isAbsolute(p)) return p;
    const abs = nodePath.resolve(p);
    return nodePath.relative(!within(abs, dir) && within(abs, realDir) ? realDir : dir, abs) || '.';
  }
  function fsError(code, syscall, given) {
    const [errno, text] = ERRNO[code];
    const p = shown(given);
    const msg = code === 'EISDIR' && syscall === 'read' ? 'EISDIR: illegal operation on a directory, read'
      : code + ': ' + text + ', ' + syscall + " '" + p + "'";
    const err = new Error(msg);
    err.errno = errno;
    err.code = code;
    err.syscall = syscall;
    if (!(code === 'EISDIR' && syscall === 'read')) err.path = p;
    return err;
  }
  function toPath(p, name) {
    name = name || 'path';
    if (typeof p === 'string') {
      // ok
    } else if (p && typeof p === 'object' && typeof p.href === 'string' && p.protocol !== undefined) {
      p = require('node:url').fileURLToPath(p);
    } else if (p instanceof Uint8Array || (p && ArrayBuffer.isView(p))) {
      p = Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('utf8');
    } else {
      const err = new TypeError('The "' + name + '" argument must be of type string or an instance of Buffer or URL. Received ' +
        (p === null ? 'null' : typeof p));
      err.code = 'ERR_INVALID_ARG_TYPE';
      throw err;
    }
    if (p.indexOf('\u0000') !== -1) {
      const err = new TypeError("The argument '" + name + "' must be a string, Uint8Array, or URL without null bytes. Received " +
        JSON.stringify(p).replace(/^"|"$/g, "'"));
      err.code = 'ERR_INVALID_ARG_VALUE';
      throw err;
    }
    return p;
  }
  function resolve(given, syscall) {
    if (!dir) throw fsError('ENOENT', syscall, given);
    const abs = nodePath.resolve(dir, given);
    if (!within(abs, dir) && !within(abs, realDir)) throw fsError('ENOENT', syscall, given);
    let real;
    try {
      real = fs.realpathSync(abs);
    } catch (e) {
      throw fsError(e.code === 'ENOTDIR' ? 'ENOTDIR' : 'ENOENT', syscall, given);
    }
    if (!within(real, realDir) && real !== bundleReal) throw fsError('ENOENT', syscall, given);
    return real;
  }
  const encodingOf = (o) => (typeof o === 'string' ? o : o && typeof o === 'object' ? o.encoding || null : null);
  const flagOf = (o) => (o && typeof o === 'object' && o.flag ? String(o.flag) : 'r');

  function readFileSync(path, opts) {
    if (typeof path === 'number') throw fsError('EROFS', 'read', 'fd ' + path);
    const p = toPath(path);
    const flag = flagOf(opts);
    if (flag !== 'r' && flag !== 'rs' && flag !== 'sr') throw fsError('EROFS', 'open', p);
    const real = resolve(p, 'open');
    let st;
    try { st = fs.statSync(real); } catch (e) { throw fsError('ENOENT', 'open', p); }
    if (st.isDirectory()) throw fsError('EISDIR', 'read', p);
    let data;
    try {
      data = fs.readFileSync(real);
    } catch (e) {
      throw fsError(e.code === 'EACCES' || e.code === 'ERR_ACCESS_DENIED' ? 'EACCES' : 'ENOENT', 'open', p);
    }
    const enc = encodingOf(opts);
    return enc ? data.toString(enc) : data;
  }
  function statSync(path, opts) {
    const p = toPath(path);
    try {
      return fs.statSync(resolve(p, 'stat'));
    } catch (e) {
      if (opts && opts.throwIfNoEntry === false && e && e.code === 'ENOENT') return undefined;
      if (e && e.syscall === 'stat' && e.path === shown(p)) throw e;
      throw fsError('ENOENT', 'stat', p);
    }
  }
  function existsSync(path) {
    try {
      resolve(toPath(path), 'stat');
      return true;
    } catch (e) {
      return false;
    }
  }
  function readdirSync(path, opts) {
    const p = toPath(path);
    const real = resolve(p, 'scandir');
    let entries;
    try {
      entries = fs.readdirSync(real, { withFileTypes: true });
    } catch (e) {
      throw fsError(e.code === 'ENOTDIR' ? 'ENOTDIR' : 'ENOENT', 'scandir', p);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (opts && typeof opts === 'object' && opts.withFileTypes) {
      return entries.map((e) => {
        const isDir = e.isSymbolicLink() ? (() => { try { return fs.statSync(nodePath.join(real, e.name)).isDirectory(); } catch (x) { return false; } })() : e.isDirectory();
        return new Dirent(e.name, isDir, p);
      });
    }
    return entries.map((e) => e.name);
  }
  function Dirent(name, isDir, parent) {
    this.name = name;
    this.parentPath = parent;
    this.path = parent;
    this._dir = isDir;
  }
  Dirent.prototype.isFile = function isFile() { return !this._dir; };
  Dirent.prototype.isDirectory = function isDirectory() { return this._dir; };
  for (const m of ['isSymbolicLink', 'isBlockDevice', 'isCharacterDevice', 'isFIFO', 'isSocket']) Dirent.prototype[m] = () => false;
  function realpathSync(path) {
    const p = toPath(path);
    const real = resolve(p, 'realpath');
    if (real === bundleReal) return nodePath.join(dir, nodePath.basename(real));
    return nodePath.join(dir, nodePath.relative(realDir, real));
  }
  realpathSync.native = realpathSync;
  const constants = fs.constants;
  function accessSync(path, mode) {
    const p = toPath(path);
    resolve(p, 'access');
    if (mode & constants.W_OK) throw fsError('EROFS', 'access', p);
  }
  const out = {
    constants,
    F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
    Stats: fs.Stats,
    Dirent,
    readFileSync,
    statSync,
    lstatSync: statSync,
    existsSync,
    readdirSync,
    realpathSync,
    accessSync,
  };
  [['writeFileSync', 'open'], ['appendFileSync', 'open'], ['mkdirSync', 'mkdir'], ['mkdtempSync', 'mkdtemp'],
    ['rmSync', 'rm'], ['rmdirSync', 'rmdir'], ['unlinkSync', 'unlink'], ['renameSync', 'rename'],
    ['copyFileSync', 'copyfile'], ['cpSync', 'cp'], ['symlinkSync', 'symlink'], ['linkSync', 'link'],
    ['chmodSync', 'chmod'], ['chownSync', 'chown'], ['utimesSync', 'utime'], ['truncateSync', 'open'],
    ['openSync', 'open'], ['writeSync', 'write'], ['createWriteStream', 'open']].forEach(([name, syscall]) => {
    out[name] = function refused(path) {
      const p = typeof path === 'string' ? path : String(path);
      if (name === 'openSync' && (arguments[1] === undefined || arguments[1] === 'r')) {
        throw fsError('EROFS', 'open', p + "' (gorender: file descriptors are not supported; use readFileSync");
      }
      throw fsError('EROFS', syscall, p);
    };
  });
  function callbackify(syncFn) {
    return function () {
      const args = Array.prototype.slice.call(arguments);
      const cb = args.pop();
      if (typeof cb !== 'function') {
        const err = new TypeError('The "cb" argument must be of type function. Received ' + typeof cb);
        err.code = 'ERR_INVALID_ARG_TYPE';
        throw err;
      }
      let value;
      let err = null;
      try {
        value = syncFn.apply(null, args);
      } catch (e) {
        if (e && e.code && /^ERR_INVALID_ARG/.test(e.code)) throw e;
        err = e;
      }
      process.nextTick(() => cb(err, value));
    };
  }
  const promisify = (syncFn) => function () {
    const args = arguments;
    return new Promise((resolve) => resolve(syncFn.apply(null, args)));
  };
  const promises = {};
  for (const name of ['readFile', 'stat', 'lstat', 'readdir', 'realpath', 'access', 'writeFile', 'appendFile', 'mkdir',
    'mkdtemp', 'rm', 'rmdir', 'unlink', 'rename', 'copyFile', 'cp', 'symlink', 'link', 'chmod', 'chown', 'utimes',
    'truncate', 'open']) {
    out[name] = callbackify(out[name + 'Sync']);
    promises[name] = promisify(out[name + 'Sync']);
  }
  out.realpath.native = out.realpath;
  out.exists = (path, cb) => process.nextTick(() => cb(existsSync(path)));
  promises.constants = constants;
  out.promises = promises;
  out.createReadStream = function createReadStream(path, opts) {
    const { Readable } = require('node:stream');
    const p = toPath(path);
    const encoding = encodingOf(opts);
    const start = opts && typeof opts === 'object' && opts.start !== undefined ? opts.start : 0;
    const end = opts && typeof opts === 'object' && opts.end !== undefined ? opts.end + 1 : undefined;
    const hwm = (opts && opts.highWaterMark) || 65536;
    let data = null;
    let pos = 0;
    const stream = new Readable({
      encoding: encoding || undefined,
      highWaterMark: hwm,
      read() {
        try {
          if (data === null) data = readFileSync(p).subarray(start, end);
        } catch (e) {
          this.destroy(e);
          return;
        }
        if (pos >= data.length) {
          this.push(null);
          return;
        }
        const chunk = data.subarray(pos, pos + hwm);
        pos += chunk.length;
        this.push(chunk);
      },
    });
    stream.path = p;
    return stream;
  };
  bundle.fs = out;
  return out;
}

// ---- Source maps for getStackTrace ---------------------------------------

// getStackTrace maps its stack frames here, as the in-process engines do
// through gorender's host function (jsvm/sourcemap): a stack frame in a
// loaded bundle (<id>.js:line:column) whose bundle has a source map shows
// the original source, line and column. gorender names the map file at load (the same
// rule as for error answers); it is read and parsed the first time a stack
// names the bundle, without its sourcesContent, and parsed maps stay within
// options.sourceMapLimit (this process's share of
// RENDERER_SOURCE_MAP_CACHE_SIZE), least recently used first out.

// parsedMapCost is the memory of a map parsed by Node's SourceMap per byte
// of its JSON without sourcesContent (18.5 measured on esbuild's map of the
// 450 KB React fixture: an array per mapping).
const parsedMapCost = 19;
const parsedMaps = new Map(); // bundle key -> { map, cost }, least recent first
let parsedMapsCost = 0;
const stackFrame = /(?:[^\s()@'"]*\/)?([A-Za-z0-9_][A-Za-z0-9._-]*\.js):(\d+):(\d+)/g;

function mapStack(stack) {
  stack = trimStack(stack);
  if (!options.sourceMapLimit) return stack;
  return stack.replace(stackFrame, (match, file, line, column) => {
    let bundle = null;
    for (const b of bundles.values()) {
      if (b.mapFile && b.shownName === file) bundle = b;
    }
    const map = bundle && sourceMapOf(bundle);
    if (!map) return match;
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1);
    if (!entry || entry.originalSource === undefined || entry.generatedLine !== Number(line) - 1) return match;
    return shownSource(entry.originalSource) + ':' + (entry.originalLine + 1) + ':' + (entry.originalColumn + 1);
  });
}

// sourceMapOf is bundle's parsed map, read on first use; null when it has
// none or it cannot be used (not looked for again).
function sourceMapOf(bundle) {
  const kept = parsedMaps.get(bundle.key);
  if (kept) {
    parsedMaps.delete(bundle.key);
    parsedMaps.set(bundle.key, kept);
    return kept.map;
  }
  if (bundle.mapUnusable) return null;
  bundle.mapUnusable = true;
  let payload;
  try {
    if (fs.statSync(bundle.mapFile).size > options.sourceMapLimit) throw new Error('larger than this process\'s share of RENDERER_SOURCE_MAP_CACHE_SIZE');
    payload = JSON.parse(fs.readFileSync(bundle.mapFile, 'utf8'));
    delete payload.sourcesContent;
    for (const s of payload.sections || []) if (s && s.map) delete s.map.sourcesContent;
  } catch (e) {
    if (e.code !== 'ENOENT') process.stderr.write('getStackTrace: the source map of bundle ' + bundle.name + ' is not used: ' + e.message + '\n');
    return null;
  }
  const cost = JSON.stringify(payload).length * parsedMapCost;
  if (cost > options.sourceMapLimit) {
    process.stderr.write('getStackTrace: the source map of bundle ' + bundle.name + ' would take about ' + cost +
      ' bytes parsed, more than this process\'s share of RENDERER_SOURCE_MAP_CACHE_SIZE (' + options.sourceMapLimit + ')\n');
    return null;
  }
  let map;
  try {
    map = new (require('node:module').SourceMap)(payload);
  } catch (e) {
    process.stderr.write('getStackTrace: the source map of bundle ' + bundle.name + ' is not used: ' + e.message + '\n');
    return null;
  }
  bundle.mapUnusable = false;
  parsedMaps.set(bundle.key, { map, cost });
  parsedMapsCost += cost;
  for (const [key, old] of parsedMaps) {
    if (parsedMapsCost <= options.sourceMapLimit) break;
    forgetSourceMap(key, old);
  }
  return map;
}

function forgetSourceMap(key, kept) {
  parsedMaps.delete(key);
  parsedMapsCost -= kept.cost;
  const bundle = bundles.get(key);
  if (bundle) bundle.mapUnusable = false; // read again when a stack names it
}

// shownSource is a map's source as jsvm/sourcemap shows it: without a
// bundler's scheme and namespace (webpack://app/) and the ../ that lead
// from the map's directory back to the sources.
function shownSource(source) {
  if (source.startsWith('webpack://')) {
    const i = source.indexOf('/', 'webpack://'.length);
    if (i >= 0) source = source.slice(i + 1);
  }
  source = nodePath.posix.normalize(source);
  while (source.startsWith('../')) source = source.slice(3);
  return source;
}

// The event loop ran out of work while a render waited: no timer,
// immediate, I/O or update is left that could finish it.
process.on('beforeExit', () => {
  if (current && !current.done) current.idle();
  input.ref();
});

process.on('uncaughtException', (e) => {
  if (current || loading) {
    reportError(e);
    return;
  }
  // Work a render left behind (an error event nobody listens to, say)
  // after its answer was decided cannot change it: gorender logs it.
  const [message] = errorParts(e);
  const when = finishing ? 'after render ' + finishing.id + ' was answered' : 'outside any render';
  try {
    fs.writeSync(2, 'uncaught exception ' + when + ': ' + message + '\n');
  } catch (x) {
    // stderr is gone.
  }
});
process.on('unhandledRejection', () => {
  // As in the Go engines: a rejection nobody handles is not an error of
  // its own; a render that awaited it has failed already.
});


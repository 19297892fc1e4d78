// The source-mapped fixture with non-ASCII text before its throws
// (tests/sourcemap_test.go): built with esbuild's charset utf8, as webpack
// with terser keeps UTF-8, so that its one minified line has 2-, 3- and
// 4-byte characters (1 or 2 UTF-16 code units) before every frame. Like
// rewritten.js, goja lowers it for its \p{…} regex and rewrites its string
// build, and QuickJS lowers it for its await.
import { greet } from './greeting.js';

const banner = 'Grüße, 世界 😀: ';
const letters = /^\p{L}+$/u;

function render(chunks) {
  let html = '';
  const sink = {
    push: function (chunk) {
      html += chunk;
      return true;
    },
  };
  chunks.forEach((chunk) => sink.push(chunk));
  return banner + html;
}

globalThis.SourceMapUnicode = {
  greet: function (user) {
    return render([greet(user)]);
  },
  name: function (name) {
    if (!letters.test(name)) {
      throw new Error('kein Name: ' + name); // line 30
    }
    return render(['<b>', name, '</b>']);
  },
  later: async function (user) {
    await null;
    return greet(user);
  },
  where: function () {
    return getStackTrace(); // line 39
  },
  missing: function (props) {
    return props.user.name; // line 42
  },
};

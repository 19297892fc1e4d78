// The source-mapped fixture that the pure-Go engines rewrite before they run
// it (tests/sourcemap_test.go): goja lowers the bundle with esbuild for its
// \p{…} regex and turns the string built with += into an array join (the
// columns after it move on the minified line); QuickJS lowers it for its
// await. Its errors must still name these lines.
import { greet } from './greeting.js';

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
  return html;
}

globalThis.SourceMapRewritten = {
  greet: function (user) {
    return render([greet(user)]);
  },
  name: function (name) {
    if (!letters.test(name)) {
      throw new Error('not a name: ' + name); // line 28
    }
    return render(['<b>', name, '</b>']);
  },
  later: async function (user) {
    await null;
    return greet(user);
  },
  where: function () {
    return getStackTrace(); // line 37
  },
};

// The source-mapped fixture's entry: esbuild bundles and minifies it with an
// external source map (build.go), so every position in the bundle is on its
// first line and only the map knows these files and lines.
import { greet } from './greeting.js';

globalThis.SourceMapApp = {
  greet: function (user) {
    return greet(user);
  },
  where: function () {
    return getStackTrace(); // line 11
  },
};

'use strict';
// Per-runtime state shared by the modules of the environment: the asset is
// evaluated once per runtime, so every module instance belongs to one runtime.
module.exports = {
  host: null, // the engine's host object (its contract is at the top of index.js)
  env: null, // the hooks env.js returned (timers, async context)
  filename: '', // the bundle's __filename
  dirname: '', // the bundle's __dirname (also process.cwd())
};

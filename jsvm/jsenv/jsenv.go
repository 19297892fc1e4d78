// Package jsenv embeds the JavaScript half of the environment a bundle
// expects (PROTOCOL.md §7), the same for every in-process engine: env.js
// (console capture, timers, per-render globals, the render hooks the host
// calls) and the Node-compatible environment of RENDERER_SUPPORT_MODULES,
// built from node/src and well-kept npm packages by node/build.sh into
// node/dist/node-env.js. Engines compile each source once per process.
package jsenv

import _ "embed"

// Env is env.js: a function of the host's options and of the host object
// that installs the environment and returns the render hooks.
//
//go:embed env.js
var Env string

// NodeEnv is the built Node-compatible environment: a factory returning its
// installer (see node/src/index.js for its host contract).
//
//go:embed node/dist/node-env.js
var NodeEnv string

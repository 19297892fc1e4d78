// Package jsenv embeds the JavaScript half of the environment a bundle
// expects (PROTOCOL.md §7), the same for every in-process engine:
//
//   - env.js: console capture, timers, per-render globals and the render
//     hooks (kind of a result, promise adoption, stream pumping);
//   - bridge.js: what the render flow (jsvm/inproc) and the host functions
//     need of the environment: the host object built from the host
//     functions, timer callbacks by id, values crossing runtimes, the ops
//     the flow calls;
//   - the Node-compatible environment of RENDERER_SUPPORT_MODULES, built
//     from node/src and well-kept npm packages by node/build.sh into
//     node/dist/node-env.js (its CommonJS loader, node/src/modules.js,
//     serves the node engine too);
//   - Programs: scripts the in-process engines run in a runtime (Intl's
//     installer and Intl, from jsvm/intl).
//
// Engines compile each source once per process.
package jsenv

import (
	_ "embed"
	"sync"

	"github.com/gorender/gorender/jsvm/intl"
)

// Env is env.js: a function of the host's options and of the host object
// that installs the environment and returns the render hooks.
//
//go:embed env.js
var Env string

// Builtins is builtins.js: a function of the engine's name that installs
// the built-ins Node 20 has and the engine lacks, first in every runtime of
// goja and quickjs (the node engine has V8's own).
//
//go:embed builtins.js
var Builtins string

// BuiltinsZoneName is builtins.js's second argument: the long English name
// of the process's time zone (what V8 ends Date's toString with) when it is
// UTC, which needs no Intl; "" for any other zone. An unknown zone is UTC,
// as for ICU.
var BuiltinsZoneName = sync.OnceValue(func() string {
	_, tz := intl.ProcessDefaults()
	switch tz {
	case "", "UTC", "Etc/UTC", "Etc/Universal", "Universal", "Etc/Zulu", "Zulu", "Etc/UCT", "UCT":
		return "Coordinated Universal Time"
	}
	return ""
})

// Bridge is bridge.js: a function of the bound host functions, the engine's
// own hooks, the options (JSON), env.js's function and the Node
// environment's factory, returning the ops of the render flow.
//
//go:embed bridge.js
var Bridge string

// NodeEnv is the built Node-compatible environment: a factory returning its
// installer (see node/src/index.js for its host contract).
//
//go:embed node/dist/node-env.js
var NodeEnv string

// NodeModules is the CommonJS loader of RENDERER_SUPPORT_MODULES (require,
// module objects, the module cache), one function declaration: node-env.js
// has it bundled, and the node engine appends it to its executor.
//
//go:embed node/src/modules.js
var NodeModules string

// Programs are scripts a host function runs in a runtime on demand, by
// name (inproc.Program): each engine compiles one once per process, the
// first time a runtime needs it, and the host function answers its
// completion value. Intl's installer (jsvm/intl/install.js) runs in every
// in-process runtime (bridge.js, host.intlInstaller), and Intl itself is
// built in a runtime the first time its page touches Intl (host.intlLoad).
var Programs = map[string]string{"intl": intl.Source(), "intl-install": intl.Installer()}

// Package engines is the one place that knows every JavaScript engine by
// name: the program picks one at start (RENDERER_JS_ENGINE), as a
// database/sql program picks a driver, and nothing above jsvm names an
// engine package.
package engines

import (
	"fmt"
	"strings"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/gojaengine"
	"github.com/gorender/gorender/jsvm/nodeengine"
	"github.com/gorender/gorender/jsvm/quickjsengine"
)

// Names are the engines New accepts.
var Names = []string{"goja", "quickjs", "node"}

// Auto is the name that stands for the best engine this machine runs
// (Choose): RENDERER_JS_ENGINE's default.
const Auto = "auto"

// Choose resolves Auto: the node engine, which renders at V8's speed, where
// a Node.js 20 or newer runs here confined (nodePath, else node on PATH),
// else goja, which needs nothing. why says which and why, for the log.
func Choose(nodePath string) (name, why string) {
	path, version, err := nodeengine.Usable(nodePath)
	if err != nil {
		return gojaengine.Name, "the node engine cannot run here (" + err.Error() + ")"
	}
	return nodeengine.Name, "Node.js " + version + " at " + path
}

// New returns the engine named name ("" is goja) with the environment
// opts describes.
func New(name string, opts jsvm.Options) (jsvm.Engine, error) {
	var (
		e   jsvm.Engine
		err error
	)
	switch name {
	case "", gojaengine.Name:
		e, err = gojaengine.New(opts)
	case quickjsengine.Name:
		e, err = quickjsengine.New(opts)
	case nodeengine.Name:
		e, err = nodeengine.New(opts)
	default:
		return nil, fmt.Errorf("unknown JavaScript engine %q (supported: %s)", name, strings.Join(Names, ", "))
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

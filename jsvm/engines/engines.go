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

// Names are the engines New accepts, the default first.
var Names = []string{"goja", "quickjs", "node"}

// Default is the engine of an empty name.
const Default = "goja"

// New returns the engine named name ("" is Default) with the environment
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

// Package engines is the one place that knows every JavaScript engine by
// name: the program picks one at start (RENDERER_JS_ENGINE), as a
// database/sql program picks a driver, and nothing above jsvm names an
// engine package.
package engines

import (
	"fmt"
	"strings"

	"github.com/gorender/gorender/jsvm"
)

// Names are the engines New accepts, the default first.
var Names = []string{"goja", "quickjs"}

// Default is the engine of an empty name.
const Default = "goja"

// New returns the engine named name ("" is Default) with the environment
// opts describes.
func New(name string, opts jsvm.Options) (jsvm.Engine, error) {
	switch name {
	case "", "goja":
		return jsvm.NewGojaEngine(opts)
	case "quickjs":
		return jsvm.NewQuickJSEngine(opts)
	default:
		return nil, fmt.Errorf("unknown JavaScript engine %q (supported: %s)", name, strings.Join(Names, ", "))
	}
}

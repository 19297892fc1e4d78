package engines

import (
	"cmp"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm"
)

func TestUnknownEngineAndSupportModules(t *testing.T) {
	if _, err := New("v8", jsvm.Options{}); err == nil || !strings.Contains(err.Error(), "supported: "+strings.Join(Names, ", ")) {
		t.Fatalf("unknown engine: %v", err)
	}
	for _, name := range append([]string{""}, Names...) {
		e, err := New(name, jsvm.Options{SupportModules: true})
		if err != nil {
			t.Fatalf("%q with support modules: %v", name, err)
		}
		if want := cmp.Or(name, Default); e.Name() != want {
			t.Fatalf("New(%q).Name() = %q", name, e.Name())
		}
		if c, ok := e.(interface{ Close() }); ok {
			c.Close() // the node engine's processes
		}
	}
}

package quickjsengine

import (
	"testing"

	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/inproc"
)

// TestConformance: the race detector makes QuickJS's translated C about ten
// times slower, so the fixture tests run without it (scripts/test.sh).
func TestConformance(t *testing.T) {
	engine := conformance.Of(Name, New)
	engine.SlowUnderRace = true
	engine.IntlBuilds = inproc.IntlBuilds
	conformance.Run(t, engine)
}

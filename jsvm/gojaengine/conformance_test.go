package gojaengine

import (
	"testing"

	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/inproc"
)

func TestConformance(t *testing.T) {
	engine := conformance.Of(Name, New)
	engine.IntlBuilds = inproc.IntlBuilds
	conformance.Run(t, engine)
}

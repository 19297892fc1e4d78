package gojaengine

import (
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm/v8math"
)

// useV8Math makes Math's transcendental functions compute V8's last bits
// (jsvm/v8math) instead of Go's math package: the Go entry point inside each
// built-in function object is replaced (as guard.go does), so Math.sin stays
// the same object with the same name, length and property attributes, and
// costs what the built-in did. It runs before guardNatives, which then wraps
// these entry points like every other built-in's.
func (v *vm) useV8Math() error {
	layout, err := gojaNativeLayout()
	if err != nil {
		return err
	}
	m, ok := v.rt.Get("Math").(*goja.Object)
	if !ok {
		return errors.New("built-in Math missing")
	}
	entry := func(name string) (*gojaCall, error) {
		fn, ok := m.Get(name).(*goja.Object)
		if !ok {
			return nil, fmt.Errorf("built-in Math.%s missing", name)
		}
		e := gojaEntry(layout, fn)
		if e == nil {
			return nil, fmt.Errorf("built-in Math.%s is not a native function", name)
		}
		return e, nil
	}
	for _, f := range v8math.Unary {
		e, err := entry(f.Name)
		if err != nil {
			return err
		}
		compute := f.F
		*e = func(c goja.FunctionCall) goja.Value {
			return v.rt.ToValue(compute(c.Argument(0).ToFloat()))
		}
	}
	for _, f := range v8math.Binary {
		e, err := entry(f.Name)
		if err != nil {
			return err
		}
		compute := f.F
		*e = func(c goja.FunctionCall) goja.Value {
			// Both arguments are converted, in order, before computing.
			x := c.Argument(0).ToFloat()
			return v.rt.ToValue(compute(x, c.Argument(1).ToFloat()))
		}
	}
	return nil
}

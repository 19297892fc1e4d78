package gojaengine

import (
	"errors"
	"fmt"
	"math"

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
	if err := v.useV8Radix(layout); err != nil {
		return err
	}
	return v.useV8JSON(layout)
}

// useV8Radix makes Number.prototype.toString(radix) write V8's digits for a
// radix other than 10 (goja's differ in the last digits, and drop the sign
// of a negative number between -1 and 1). Radix 10, an invalid radix and a
// this that is not a number stay with goja's own, given the radix already
// converted so that a valueOf runs once. It also mends toPrecision and
// toExponential of negative numbers (below).
func (v *vm) useV8Radix(layout *gojaLayout) error {
	number, ok := v.rt.Get("Number").(*goja.Object)
	if !ok {
		return errors.New("built-in Number missing")
	}
	proto, ok := number.Get("prototype").(*goja.Object)
	if !ok {
		return errors.New("built-in Number.prototype missing")
	}
	entry := func(name string) (*gojaCall, error) {
		fn, ok := proto.Get(name).(*goja.Object)
		if !ok {
			return nil, fmt.Errorf("built-in Number.prototype.%s missing", name)
		}
		e := gojaEntry(layout, fn)
		if e == nil || *e == nil {
			return nil, fmt.Errorf("built-in Number.prototype.%s is not a native function", name)
		}
		return e, nil
	}
	e, err := entry("toString")
	if err != nil {
		return err
	}
	toString := *e
	*e = func(c goja.FunctionCall) goja.Value {
		if goja.IsUndefined(c.Argument(0)) {
			return toString(c)
		}
		x, ok := v.thisNumber(c.This)
		if !ok {
			return toString(c)
		}
		radix := c.Argument(0).ToInteger()
		if radix < 2 || radix > 36 || radix == 10 {
			return toString(goja.FunctionCall{This: c.This, Arguments: []goja.Value{v.rt.ToValue(radix)}})
		}
		return v.rt.ToValue(v8math.FormatRadix(x, int(radix)))
	}
	// goja writes a negative number whose digits round up to a new power of
	// ten wrongly ((-96).toPrecision(1) was ".0e+1", (-0.96).toPrecision(1)
	// ".0.0"); the specification formats -x and prefixes "-", as here.
	for _, name := range []string{"toPrecision", "toExponential"} {
		e, err := entry(name)
		if err != nil {
			return err
		}
		own := *e
		*e = func(c goja.FunctionCall) goja.Value {
			x, ok := v.thisNumber(c.This)
			if !ok || !(x < 0) {
				return own(c)
			}
			return v.rt.ToValue("-" + own(goja.FunctionCall{This: v.rt.ToValue(-x), Arguments: c.Arguments}).String())
		}
	}
	return nil
}

// thisNumber is the number a Number.prototype method's this holds: a number
// or a Number object.
func (v *vm) thisNumber(this goja.Value) (float64, bool) {
	if o, ok := this.(*goja.Object); ok {
		if o.ClassName() != "Number" {
			return 0, false
		}
		this = v.rt.ToValue(o.Export())
	}
	switch n := this.Export().(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return math.NaN(), false
}

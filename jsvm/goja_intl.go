package jsvm

// goja's bindings of Intl's host functions (see the Intl section of env.js
// and jsvm/intl).

import (
	"sync"
	"sync/atomic"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm/intl"
)

// intlLoads counts the runtimes that built Intl (tests: a page that never
// touches Intl pays nothing).
var intlLoads atomic.Int64

// intlProgram is jsvm/intl's bundle, compiled once per process.
var intlProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("gorender-intl.js", intl.Source(), false)
})

func (r *gojaRuntime) bindIntl(set func(string, func(goja.FunctionCall) goja.Value)) {
	vm := r.vm
	set("intlLoad", func(goja.FunctionCall) goja.Value {
		intlLoads.Add(1)
		p, err := intlProgram()
		if err != nil {
			panic(vm.NewGoError(err))
		}
		v, err := vm.RunProgram(p)
		if err != nil {
			panic(err)
		}
		return v
	})
	set("intlLocaleData", func(c goja.FunctionCall) goja.Value {
		s, err := intl.LocaleData(c.Argument(0).String(), c.Argument(1).String())
		if err != nil {
			panic(vm.NewGoError(err))
		}
		return vm.ToValue(s)
	})
	set("intlZoneOffset", func(c goja.FunctionCall) goja.Value {
		off, dst, ok := intl.ZoneOffset(c.Argument(0).String(), c.Argument(1).ToFloat())
		if !ok {
			return goja.Null()
		}
		return vm.NewArray(off, dst)
	})
	set("intlDefaultTimeZone", func(goja.FunctionCall) goja.Value {
		_, tz := intl.ProcessDefaults()
		return vm.ToValue(tz)
	})
	set("intlDefaultLocale", func(goja.FunctionCall) goja.Value {
		l, _ := intl.ProcessDefaults()
		return vm.ToValue(l)
	})
	set("intlCollate", func(c goja.FunctionCall) goja.Value {
		o := intl.CollatorOptions{
			Sensitivity:       c.Argument(1).String(),
			CaseFirst:         c.Argument(2).String(),
			Numeric:           c.Argument(3).ToBoolean(),
			IgnorePunctuation: c.Argument(4).ToBoolean(),
		}
		return vm.ToValue(r.collators.Compare(c.Argument(0).String(), o, c.Argument(5).String(), c.Argument(6).String()))
	})
	set("intlCaseMap", func(c goja.FunctionCall) goja.Value {
		return vm.ToValue(intl.CaseMap(c.Argument(0).String(), c.Argument(1).String(), c.Argument(2).ToBoolean()))
	})
}

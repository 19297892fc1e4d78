package jsvm

// QuickJS's half of Intl's host functions (see the Intl section of env.js
// and jsvm/intl): the dispatcher's intl ops.

import (
	"encoding/json"
	"fmt"
	"sync"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/gorender/gorender/jsvm/intl"
)

// qjsIntlAsset is jsvm/intl's bundle as bytecode, compiled once per process
// the first time a runtime needs it.
var qjsIntlAsset = sync.OnceValues(func() ([]byte, error) {
	return qjsCompileStrip(intl.Source(), "gorender-intl.js", lib.MJS_STRIP_SOURCE)
})

func (r *qjsRuntime) intlOp(op int, a qjsArgs) quickjs.Value {
	switch op {
	case opIntlLoad:
		intlLoads.Add(1)
		bc, err := qjsIntlAsset()
		if err != nil {
			return r.failWith(&qjsHostError{Name: "Error", Message: fmt.Sprintf("compile Intl: %v", err)})
		}
		v, err := r.evalBytecode(bc)
		if err != nil {
			return r.failWith(&qjsHostError{Name: "Error", Message: r.describe(err)})
		}
		return v
	case opIntlLocaleData:
		s, err := intl.LocaleData(a.str(0), a.str(1))
		if err != nil {
			return r.failWith(&qjsHostError{Name: "Error", Message: err.Error()})
		}
		return r.str(s)
	case opIntlZoneOffset:
		off, dst, ok := intl.ZoneOffset(a.str(0), a.num(1))
		if !ok {
			return r.str("null")
		}
		b, _ := json.Marshal([]any{off, dst})
		return r.str(string(b))
	case opIntlDefaultTimeZone:
		_, tz := intl.ProcessDefaults()
		return r.str(tz)
	case opIntlDefaultLocale:
		l, _ := intl.ProcessDefaults()
		return r.str(l)
	case opIntlCollate:
		o := intl.CollatorOptions{Sensitivity: a.str(1), CaseFirst: a.str(2), Numeric: a.bool(3), IgnorePunctuation: a.bool(4)}
		return r.vm.NewFloat64(float64(r.collators.Compare(a.str(0), o, a.str(5), a.str(6))))
	case opIntlCaseMap:
		return r.str(intl.CaseMap(a.str(0), a.str(1), a.bool(2)))
	}
	return quickjs.UndefinedValue
}

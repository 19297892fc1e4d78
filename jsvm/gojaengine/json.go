package gojaengine

import (
	"errors"
	"math"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/dop251/goja"
)

// useV8JSON mends goja's JSON where it differs from V8's, by replacing the
// Go entry points of JSON.parse and JSON.stringify (as useV8Math does), so
// that both stay the same objects and a call that needs no mending costs
// what it did:
//   - JSON.parse of a number out of double range is ±Infinity in V8; goja's
//     decoder (encoding/json) throws a SyntaxError. Only on that error is
//     the text parsed again by parseOutOfRange.
//   - JSON.stringify with an indent: goja leaves the indent of an empty
//     array or object one level deeper for everything after it, and cuts a
//     string gap at 10 bytes, not code units. With a gap, the text is
//     stringified compact by goja and indented here (the indented text is
//     a function of the compact one), as V8 does: also V8's newlines with
//     an empty gap for a number between 0 and 1.
func (v *vm) useV8JSON(layout *gojaLayout) error {
	json, ok := v.rt.Get("JSON").(*goja.Object)
	if !ok {
		return errors.New("built-in JSON missing")
	}
	entry := func(name string) (*gojaCall, error) {
		fn, ok := json.Get(name).(*goja.Object)
		if !ok {
			return nil, errors.New("built-in JSON." + name + " missing")
		}
		e := gojaEntry(layout, fn)
		if e == nil || *e == nil {
			return nil, errors.New("built-in JSON." + name + " is not a native function")
		}
		return e, nil
	}
	parseEntry, err := entry("parse")
	if err != nil {
		return err
	}
	parse := *parseEntry
	var retry goja.Callable
	*parseEntry = func(c goja.FunctionCall) (result goja.Value) {
		defer func() {
			if r := recover(); r != nil {
				if !outOfRange(r) {
					panic(r)
				}
				if retry == nil {
					prg, err := parseOutOfRangeProgram()
					if err != nil {
						panic(v.rt.NewGoError(err))
					}
					mk, err := v.rt.RunProgram(prg)
					if err != nil {
						panic(err)
					}
					f, _ := goja.AssertFunction(mk)
					fn, err := f(goja.Undefined(), v.rt.ToValue(parse))
					if err != nil {
						panic(err)
					}
					retry, _ = goja.AssertFunction(fn)
				}
				out, err := retry(goja.Undefined(), c.Argument(0), c.Argument(1))
				if err != nil {
					panic(err)
				}
				result = out
			}
		}()
		return parse(c)
	}

	stringifyEntry, err := entry("stringify")
	if err != nil {
		return err
	}
	stringify := *stringifyEntry
	*stringifyEntry = func(c goja.FunctionCall) goja.Value {
		space := c.Argument(2)
		if goja.IsUndefined(space) || goja.IsNull(space) {
			return stringify(c)
		}
		gap, lines := v.gap(space)
		compact := stringify(goja.FunctionCall{This: c.This, Arguments: []goja.Value{c.Argument(0), c.Argument(1)}})
		if !lines || goja.IsUndefined(compact) {
			return compact
		}
		return v.rt.ToValue(indentJSON(compact.String(), gap))
	}
	return nil
}

// gap is JSON.stringify's gap for space as V8 computes it, and whether
// the text is laid out on lines (V8 does so for any number above 0, even
// when it gives no spaces).
func (v *vm) gap(space goja.Value) (string, bool) {
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = v.rt.ToValue(space.ToFloat())
		case "String":
			space = v.rt.ToValue(space.String())
		default:
			return "", false
		}
	}
	switch s := space.Export().(type) {
	case string:
		u := utf16.Encode([]rune(s))
		if len(u) > 10 {
			u = u[:10]
		}
		g := string(utf16.Decode(u))
		return g, g != ""
	case int64, float64:
		f := space.ToFloat()
		if !(f > 0) {
			return "", false
		}
		return strings.Repeat(" ", int(math.Min(10, math.Floor(f)))), true
	}
	return "", false
}

// indentJSON lays compact JSON text (JSON.stringify's, no whitespace) out
// as JSON.stringify does with gap: each member and element on a line of
// its own, indented by gap per level, ": " after a key, and an empty array
// or object as [] or {}.
func indentJSON(s, gap string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	depth := 0
	newline := func() {
		b.WriteByte('\n')
		for i := 0; i < depth; i++ {
			b.WriteString(gap)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(s[i : j+1])
			i = j
		case '{', '[':
			if i+1 < len(s) && (s[i+1] == '}' || s[i+1] == ']') {
				b.WriteString(s[i : i+2])
				i++
				continue
			}
			b.WriteByte(c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			b.WriteByte(c)
		case ',':
			b.WriteByte(',')
			newline()
		case ':':
			b.WriteString(": ")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// outOfRange reports goja's error for a JSON number out of double range.
func outOfRange(r any) bool {
	var msg string
	switch e := r.(type) {
	case *goja.Object:
		msg = e.String()
	case *goja.Exception:
		msg = e.Value().String()
	default:
		return false
	}
	return strings.HasPrefix(msg, "SyntaxError") && strings.Contains(msg, "cannot unmarshal number")
}

// parseOutOfRangeSource parses a JSON text holding numbers out of double
// range: each such number (found outside strings) becomes a string that
// cannot occur in the text, turned back into ±Infinity by a reviver
// running before the page's own (on the same values, in the same order).
var parseOutOfRangeProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("gorender-json.js", `(function (parse) {
  var token = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/g;
  var plus = '\u0000gorender-json+Infinity', minus = '\u0000gorender-json-Infinity';
  return function (text, reviver) {
    text = String(text);
    var mended = text.indexOf('gorender-json') < 0 ? text.replace(token, function (t) {
      if (t.charCodeAt(0) === 34) return t;
      var n = +t;
      return n === Infinity ? '"\\u0000gorender-json+Infinity"' : n === -Infinity ? '"\\u0000gorender-json-Infinity"' : t;
    }) : text;
    var own = typeof reviver === 'function';
    return parse(mended, function (key, value) {
      if (value === plus) value = Infinity;
      else if (value === minus) value = -Infinity;
      return own ? reviver.call(this, key, value) : value;
    });
  };
})`, true)
})

//lint:file-ignore ST1005 these errors are the messages of JavaScript SyntaxErrors, worded as V8 words them.

package transform

//go:generate node unicodeprops.mjs
//go:generate gofmt -w unicodeprops_gen.go

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// RewritePropertyEscapes replaces the \p{…} and \P{…} escapes of a u-mode
// regex pattern with explicit character classes built from Go's Unicode
// tables, for engines whose regex engine lacks them, and, for the binary
// properties Go has no table for (Emoji, Extended_Pictographic, Cased…),
// from Node's (unicodeprops_gen.go). A property neither has is an error
// naming the gap.
func RewritePropertyEscapes(pattern string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern) && (pattern[i+1] == 'p' || pattern[i+1] == 'P') &&
			i+2 < len(pattern) && pattern[i+2] == '{':
			end := strings.IndexByte(pattern[i+3:], '}')
			if end < 0 {
				return "", fmt.Errorf("Invalid regular expression: /%s/u: Invalid property name", pattern)
			}
			name := pattern[i+3 : i+3+end]
			ranges, err := propertyRanges(name)
			if err != nil {
				return "", fmt.Errorf("Invalid regular expression: /%s/u: %v", pattern, err)
			}
			negate := pattern[i+1] == 'P'
			switch {
			case inClass && negate:
				writeRanges(&b, complementRanges(ranges))
			case inClass:
				writeRanges(&b, ranges)
			case negate:
				b.WriteString("[^")
				writeRanges(&b, ranges)
				b.WriteByte(']')
			default:
				b.WriteByte('[')
				writeRanges(&b, ranges)
				b.WriteByte(']')
			}
			i += 3 + end
		case c == '\\' && i+1 < len(pattern):
			b.WriteByte(c)
			b.WriteByte(pattern[i+1])
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

type runeRange struct{ lo, hi rune }

func writeRanges(b *strings.Builder, rs []runeRange) {
	for _, r := range rs {
		fmt.Fprintf(b, `\u{%X}`, r.lo)
		if r.hi != r.lo {
			fmt.Fprintf(b, `-\u{%X}`, r.hi)
		}
	}
}

var generalCategoryAliases = map[string]string{
	"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
	"Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn",
	"Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd", "digit": "Nd",
	"Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
	"Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
	"Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
	"Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl",
	"Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs",
	"Private_Use": "Co", "Unassigned": "Cn",
}

var scriptAliases = map[string]string{
	"Latn": "Latin", "Grek": "Greek", "Cyrl": "Cyrillic", "Arab": "Arabic", "Hebr": "Hebrew", "Hani": "Han",
	"Hira": "Hiragana", "Kana": "Katakana", "Hang": "Hangul", "Thai": "Thai", "Deva": "Devanagari", "Zyyy": "Common",
	"Zinh": "Inherited", "Qaai": "Inherited", "Armn": "Armenian", "Geor": "Georgian", "Ethi": "Ethiopic",
}

// propertyRanges returns the sorted, merged ranges of a property name as
// ECMAScript spells it.
func propertyRanges(name string) ([]runeRange, error) {
	key, value, hasValue := strings.Cut(name, "=")
	var tables []*unicode.RangeTable
	switch {
	case hasValue && (key == "General_Category" || key == "gc"):
		t, err := categoryTables(value)
		if err != nil {
			return nil, err
		}
		tables = t
	case hasValue && (key == "Script" || key == "sc" || key == "Script_Extensions" || key == "scx"):
		if alias, ok := scriptAliases[value]; ok {
			value = alias
		}
		t, ok := unicode.Scripts[value]
		if !ok {
			return nil, fmt.Errorf("Invalid property name (gorender has no Unicode data for script %q)", value)
		}
		tables = []*unicode.RangeTable{t}
	case hasValue:
		return nil, fmt.Errorf("Invalid property name %q", name)
	default:
		switch name {
		case "Any":
			return []runeRange{{0, unicode.MaxRune}}, nil
		case "ASCII":
			return []runeRange{{0, 0x7F}}, nil
		case "Assigned":
			return complementRanges(collectRanges(unassigned())), nil
		case "Alphabetic", "Alpha":
			tables = []*unicode.RangeTable{unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl, unicode.Other_Alphabetic}
		case "Uppercase", "Upper":
			tables = []*unicode.RangeTable{unicode.Lu, unicode.Other_Uppercase}
		case "Lowercase", "Lower":
			tables = []*unicode.RangeTable{unicode.Ll, unicode.Other_Lowercase}
		case "ID_Start", "IDS":
			return subtract(collectRanges([]*unicode.RangeTable{unicode.L, unicode.Nl, unicode.Other_ID_Start}),
				collectRanges([]*unicode.RangeTable{unicode.Pattern_Syntax, unicode.Pattern_White_Space})), nil
		case "ID_Continue", "IDC":
			return subtract(collectRanges([]*unicode.RangeTable{unicode.L, unicode.Nl, unicode.Other_ID_Start,
				unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue}),
				collectRanges([]*unicode.RangeTable{unicode.Pattern_Syntax, unicode.Pattern_White_Space})), nil
		case "White_Space", "space":
			tables = []*unicode.RangeTable{unicode.White_Space}
		default:
			if alias, ok := nodePropertyAliases[name]; ok {
				name = alias
			}
			if pairs, ok := nodeProperties[name]; ok {
				rs := make([]runeRange, 0, len(pairs)/2)
				for i := 0; i+1 < len(pairs); i += 2 {
					rs = append(rs, runeRange{pairs[i], pairs[i+1]})
				}
				return rs, nil
			}
			if t, err := categoryTables(name); err == nil {
				tables = t
			} else if t, ok := unicode.Properties[name]; ok {
				tables = []*unicode.RangeTable{t}
			} else {
				return nil, fmt.Errorf("Invalid property name (gorender's goja engine has no Unicode data for \\p{%s})", name)
			}
		}
	}
	return collectRanges(tables), nil
}

func categoryTables(value string) ([]*unicode.RangeTable, error) {
	if alias, ok := generalCategoryAliases[value]; ok {
		value = alias
	}
	switch value {
	case "LC":
		return []*unicode.RangeTable{unicode.Lu, unicode.Ll, unicode.Lt}, nil
	case "Cn":
		return unassigned(), nil
	}
	t, ok := unicode.Categories[value]
	if !ok {
		return nil, fmt.Errorf("Invalid property name %q", value)
	}
	if value == "C" {
		return append([]*unicode.RangeTable{t}, unassigned()...), nil
	}
	return []*unicode.RangeTable{t}, nil
}

// unassigned is Cn as a table: everything no category claims.
func unassigned() []*unicode.RangeTable {
	var all []*unicode.RangeTable
	for name, t := range unicode.Categories {
		if len(name) == 2 {
			all = append(all, t)
		}
	}
	rs := complementRanges(collectRanges(all))
	t := &unicode.RangeTable{}
	for _, r := range rs {
		t.R32 = append(t.R32, unicode.Range32{Lo: uint32(r.lo), Hi: uint32(r.hi), Stride: 1})
	}
	return []*unicode.RangeTable{t}
}

func collectRanges(tables []*unicode.RangeTable) []runeRange {
	var rs []runeRange
	add := func(lo, hi, stride uint32) {
		if stride == 1 {
			rs = append(rs, runeRange{rune(lo), rune(hi)})
			return
		}
		for c := lo; c <= hi; c += stride {
			rs = append(rs, runeRange{rune(c), rune(c)})
		}
	}
	for _, t := range tables {
		for _, r := range t.R16 {
			add(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
		}
		for _, r := range t.R32 {
			add(r.Lo, r.Hi, r.Stride)
		}
	}
	return mergeRanges(rs)
}

func mergeRanges(rs []runeRange) []runeRange {
	slices.SortFunc(rs, func(a, b runeRange) int { return int(a.lo - b.lo) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func complementRanges(rs []runeRange) []runeRange {
	var out []runeRange
	next := rune(0)
	for _, r := range rs {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, runeRange{next, unicode.MaxRune})
	}
	return out
}

// subtract returns a minus b (both merged).
func subtract(a, b []runeRange) []runeRange {
	keep := complementRanges(b)
	var out []runeRange
	i, j := 0, 0
	for i < len(a) && j < len(keep) {
		lo, hi := max(a[i].lo, keep[j].lo), min(a[i].hi, keep[j].hi)
		if lo <= hi {
			out = append(out, runeRange{lo, hi})
		}
		if a[i].hi < keep[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

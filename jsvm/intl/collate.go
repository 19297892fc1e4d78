package intl

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// Collators compares strings for one runtime: Intl.Collator and
// String.prototype.localeCompare. A runtime runs one script at a time, and
// x/text's Collator keeps a buffer, so each runtime has its own.
type Collators struct {
	byKey map[string]*collator
}

type collator struct {
	c         *collate.Collator
	upperCase bool // caseFirst "upper": uppercase sorts before lowercase
}

// maxCollators bounds the collators a runtime keeps (one per locale and
// options a page used); past it they are rebuilt on use.
const maxCollators = 64

// CollatorOptions are a resolved Intl.Collator's options, as src/collator.js
// passes them: sensitivity (base, accent, case, variant), caseFirst (upper,
// lower, false), numeric and ignorePunctuation.
type CollatorOptions struct {
	Sensitivity       string
	CaseFirst         string
	Numeric           bool
	IgnorePunctuation bool
}

func (o CollatorOptions) key(locale string) string {
	var b strings.Builder
	b.WriteString(locale)
	b.WriteByte(0)
	b.WriteString(o.Sensitivity)
	b.WriteByte(0)
	b.WriteString(o.CaseFirst)
	if o.Numeric {
		b.WriteString("\x00n")
	}
	if o.IgnorePunctuation {
		b.WriteString("\x00p")
	}
	return b.String()
}

func (cs *Collators) get(locale string, o CollatorOptions) *collator {
	k := o.key(locale)
	if c, ok := cs.byKey[k]; ok {
		return c
	}
	if cs.byKey == nil || len(cs.byKey) >= maxCollators {
		cs.byKey = map[string]*collator{}
	}
	tag, err := language.Parse(locale)
	if err != nil {
		tag = language.Und
	}
	var opts []collate.Option
	switch o.Sensitivity {
	case "base":
		opts = append(opts, collate.IgnoreCase, collate.IgnoreDiacritics)
	case "accent":
		opts = append(opts, collate.IgnoreCase)
	case "case":
		// Base letters, then case alone (Compare): x/text has no case level.
		opts = append(opts, collate.IgnoreCase, collate.IgnoreDiacritics)
	}
	if o.Numeric {
		opts = append(opts, collate.Numeric)
	}
	// The u extension's collation type (co) and options come from the tag;
	// those above override its strength.
	opts = append([]collate.Option{collate.OptionsFromTag(tag)}, opts...)
	c := &collator{c: collate.New(tag, opts...), upperCase: o.CaseFirst == "upper"}
	cs.byKey[k] = c
	return c
}

// Compare is -1, 0 or 1 as a sorts before, with or after b.
func (cs *Collators) Compare(locale string, o CollatorOptions, a, b string) int {
	c := cs.get(locale, o)
	if o.IgnorePunctuation {
		a, b = stripPunctuation(a), stripPunctuation(b)
	}
	r := c.c.CompareString(a, b)
	if r == 0 && o.Sensitivity == "case" {
		return cs.get(locale, CollatorOptions{Sensitivity: "variant", CaseFirst: o.CaseFirst, Numeric: o.Numeric}).c.CompareString(stripMarks(a), stripMarks(b))
	}
	if r != 0 && c.upperCase && o.Sensitivity != "base" && o.Sensitivity != "accent" {
		// x/text has no caseFirst: strings that differ only in case (at the
		// tertiary level) compare in the opposite order with case swapped.
		if c.c.CompareString(strings.ToLower(a), strings.ToLower(b)) == 0 {
			return c.c.CompareString(swapCase(a), swapCase(b))
		}
	}
	return r
}

// stripPunctuation drops what ICU's "alternate shifted" ignores at the
// primary level: spaces and punctuation (x/text does not implement shifted).
func stripPunctuation(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsPunct(r) {
			return -1
		}
		return r
	}, s)
}

// stripMarks drops combining marks (after canonical decomposition): what
// sensitivity "case" ignores besides the base letters.
func stripMarks(s string) string {
	return norm.NFC.String(strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s)))
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsUpper(r):
			return unicode.ToLower(r)
		case unicode.IsLower(r):
			return unicode.ToUpper(r)
		}
		return r
	}, s)
}

// CaseMap is String.prototype.toLocaleUpperCase / toLocaleLowerCase for a
// language (the first subtag of the locale): Turkish and Azeri dotted and
// dotless i, Lithuanian dot above, Greek accents in upper case, as ICU does.
func CaseMap(lang, s string, upper bool) string {
	tag, err := language.Parse(lang)
	if err != nil {
		tag = language.Und
	}
	if upper {
		return cases.Upper(tag).String(s)
	}
	return cases.Lower(tag).String(s)
}

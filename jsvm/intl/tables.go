package intl

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Locale data is immutable, so the process keeps one copy of each locale file
// in use (the locales cache below) and every runtime of every bundle reads
// it: a runtime makes JavaScript objects only of what its polyfills read.
// The large tables of a locale's data (tablePaths, where "*" is any key: ~750
// date formats, ~700 interval formats, the names of ~600 zones and ~300
// currencies, ~200 units, the compact number patterns of each numbering
// system)
// stay in Go: LocaleData gives a runtime the rest, with a marker where each
// table was (src/index.js makes the marker a table object that asks for an
// entry when it is first read: LocaleKeys, LocaleEntry). Parsed as
// JavaScript objects in each runtime, those tables were most of the ~2 MB a
// locale cost each goja runtime (docs/intl.md "Memory").
var tablePaths = map[string][]string{
	"datetimeformat": {"formats.gregory", "intervalFormats", "timeZoneName"},
	"numberformat":   {"currencies", "units.simple", "numbers.decimal.*.long", "numbers.decimal.*.short", "numbers.currency.*.short"},
}

// tableMarker prefixes the path of a table in the JSON text LocaleData
// gives, where the table's object was (no CLDR string starts with it).
const tableMarker = "@gorender-table:"

// localeFile is one locale file's data, split: the JSON text of what is not
// in a table, and the tables by path.
type localeFile struct {
	top    string
	tables map[string]*table
	size   int // bytes of text held
}

// table is one table of a locale file: its keys in the order JavaScript
// lists those of the parsed object (the polyfills pick the first of equally
// good formats), joined by "\n", and the JSON text of each entry.
type table struct {
	keys    string
	entries map[string]string
}

// localesBudget bounds the bytes of locale data the process keeps (the text
// of each file, ~200 KB for a locale's dates, ~100 KB for its numbers):
// ~300 files, more than a site's locales. A file evicted past it is read
// from the archive again when a runtime next asks.
const localesBudget = 64 << 20

// locales is the process's cache of split locale files, filled once per
// file (concurrent askers wait for the first), evicted oldest first past
// localesBudget.
var locales = struct {
	sync.Mutex
	cells map[string]*localeCell
	order []string
	bytes int
}{cells: map[string]*localeCell{}}

type localeCell struct {
	once sync.Once
	file *localeFile
	err  error
}

// loadLocale returns the split data of one locale file for one polyfill.
func loadLocale(kind, file string) (*localeFile, error) {
	key := kind + "/" + file
	c := &locales
	c.Lock()
	cell, ok := c.cells[key]
	if !ok {
		cell = &localeCell{}
		c.cells[key] = cell
	}
	c.Unlock()
	cell.once.Do(func() {
		cell.file, cell.err = readLocale(kind, file)
		c.Lock()
		defer c.Unlock()
		if cell.err != nil || c.cells[key] != cell {
			delete(c.cells, key) // an error is not kept: it says what went wrong, once
			return
		}
		c.order = append(c.order, key)
		c.bytes += cell.file.size
		for c.bytes > localesBudget && len(c.order) > 1 {
			old := c.order[0]
			c.order = c.order[1:]
			if oc := c.cells[old]; oc != nil {
				c.bytes -= oc.file.size
				delete(c.cells, old)
			}
		}
	})
	return cell.file, cell.err
}

func readLocale(kind, file string) (*localeFile, error) {
	a, err := loadArchive()
	if err != nil {
		return nil, err
	}
	text, err := a.entry(kind, file)
	if err != nil {
		return nil, err
	}
	f := &localeFile{tables: map[string]*table{}}
	top, err := cutTables([]byte(text), "", tablePaths[kind], f.tables)
	if err != nil {
		return nil, fmt.Errorf("intl: %s data for %q: %w", kind, file, err)
	}
	f.top = string(top)
	f.size = len(f.top)
	for _, t := range f.tables {
		f.size += len(t.keys)
		for _, v := range t.entries {
			f.size += len(v)
		}
	}
	return f, nil
}

// cutTables returns the JSON object text with each of paths (dotted,
// relative to it; prefix is its own path) that it holds replaced by
// tableMarker and the path, and adds those tables to tables.
func cutTables(text []byte, prefix string, paths []string, tables map[string]*table) ([]byte, error) {
	if len(paths) == 0 {
		return text, nil
	}
	keys, values, err := objectMembers(text)
	if err != nil {
		return nil, err
	}
	changed := false
	for i, key := range keys {
		var inner []string
		here := false
		for _, p := range paths {
			first, rest, nested := strings.Cut(p, ".")
			if first != key && first != "*" {
				continue
			}
			if nested {
				inner = append(inner, rest)
			} else {
				here = true
			}
		}
		path := prefix + key
		isObject := len(values[i]) > 0 && values[i][0] == '{'
		switch {
		case here && isObject:
			t, err := newTable(values[i])
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", path, err)
			}
			tables[path] = t
			marker, _ := json.Marshal(tableMarker + path)
			values[i] = marker
			changed = true
		case here:
			return nil, fmt.Errorf("table %s: not an object", path)
		case len(inner) > 0 && isObject:
			v, err := cutTables(values[i], path+".", inner, tables)
			if err != nil {
				return nil, err
			}
			values[i] = v
			changed = true
		}
	}
	if !changed {
		return text, nil
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, key := range keys {
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(values[i])
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// objectMembers are the keys of a JSON object, in order, and their values'
// text.
func objectMembers(text []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, key)
		values = append(values, v)
	}
	return keys, values, nil
}

func newTable(text []byte) (*table, error) {
	keys, values, err := objectMembers(text)
	if err != nil {
		return nil, err
	}
	t := &table{entries: make(map[string]string, len(keys))}
	for i, key := range keys {
		if strings.Contains(key, "\n") {
			return nil, fmt.Errorf("key %q holds a newline", key)
		}
		if _, dup := t.entries[key]; dup {
			return nil, fmt.Errorf("key %q twice", key)
		}
		t.entries[key] = string(values[i])
	}
	t.keys = strings.Join(jsKeyOrder(keys), "\n")
	return t, nil
}

// jsKeyOrder is the order in which JavaScript lists the keys of the object
// JSON.parse makes: array indices ascending, then the others as written.
func jsKeyOrder(keys []string) []string {
	var indices, others []string
	for _, k := range keys {
		if n, err := strconv.ParseUint(k, 10, 32); err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == k {
			indices = append(indices, k)
		} else {
			others = append(others, k)
		}
	}
	slices.SortStableFunc(indices, func(a, b string) int {
		x, _ := strconv.ParseUint(a, 10, 32)
		y, _ := strconv.ParseUint(b, 10, 32)
		return cmp.Compare(x, y)
	})
	return append(indices, others...)
}

// LocaleData is the JSON text of one locale file's data for one polyfill
// (kind: pluralrules, numberformat, datetimeformat, relativetimeformat,
// listformat, displaynames), as FormatJS's locale-data/<file>.js would add it,
// except that each table (tablePaths) is the string tableMarker + its path.
func LocaleData(kind, file string) (string, error) {
	f, err := loadLocale(kind, file)
	if err != nil {
		return "", err
	}
	return f.top, nil
}

// LocaleKeys are the keys of a table of a locale file, in order, joined by
// "\n".
func LocaleKeys(kind, file, path string) (string, error) {
	t, err := localeTable(kind, file, path)
	if err != nil {
		return "", err
	}
	return t.keys, nil
}

// LocaleEntry is the JSON text of one entry of a table of a locale file, if
// it has the key.
func LocaleEntry(kind, file, path, key string) (string, bool, error) {
	t, err := localeTable(kind, file, path)
	if err != nil {
		return "", false, err
	}
	v, ok := t.entries[key]
	return v, ok, nil
}

func localeTable(kind, file, path string) (*table, error) {
	f, err := loadLocale(kind, file)
	if err != nil {
		return nil, err
	}
	t, ok := f.tables[path]
	if !ok {
		return nil, fmt.Errorf("intl: %s data for %q has no table %q", kind, file, path)
	}
	return t, nil
}

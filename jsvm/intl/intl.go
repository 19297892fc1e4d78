// Package intl is gorender's ECMA-402 Intl for the pure-Go engines (goja and
// quickjs), answering as Node 20 does (ICU 78, CLDR 48).
//
// Most of it is JavaScript: the FormatJS polyfills with their CLDR data,
// bundled by build.sh into dist/intl.js (the code, compiled once per process
// by each engine) and dist/locale-data.bin (every locale's data, deduplicated
// and compressed, read one locale at a time: see data.go). What Go does better
// is done here, as functions the engines bind into the runtime's host object:
// collation (golang.org/x/text/collate), locale-sensitive case mapping
// (golang.org/x/text/cases) and time zones (Go's time zone database).
//
// A runtime pays for none of it until its page first touches Intl or a
// locale-aware built-in (install.js loads it then), and for a locale's data
// only when that locale is first used; the large tables of a locale's data
// stay in Go, one copy per process (tables.go).
package intl

import (
	_ "embed"
)

//go:embed dist/intl.js
var source string

// Source is the bundled JavaScript (dist/intl.js): a script whose completion
// value is install(host), see src/index.js for the host it expects.
func Source() string { return source }

//go:embed install.js
var installer string

// Installer is install.js: a script whose completion value is a function of
// the host object that installs a lazy Intl in a runtime without one.
func Installer() string { return installer }

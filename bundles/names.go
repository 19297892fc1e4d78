// Package bundles is gorender's on-disk bundle cache: bundle id and companion
// file name validation, the cache layout of PROTOCOL.md §6.3, streaming of
// uploaded parts into per-request staging directories, the first-writer-wins
// store with per-id locking (in process and across processes), and sweeping of
// abandoned staging directories. It knows nothing of JavaScript or HTTP.
package bundles

import (
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"
)

// MaxIDLen is the longest accepted bundle id in bytes. The longest file name
// derived from an id is "<id>.js.lock", which must fit the usual 255-byte
// limit of a path component, so ids are at most 255-len(".js.lock") bytes.
const MaxIDLen = 255 - len(lockSuffix)

// MaxAssetNameLen is the longest accepted companion file name in bytes.
const MaxAssetNameLen = 255

const (
	bundleSuffix = ".js"
	lockSuffix   = ".js.lock"
)

var idRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// ValidID reports whether id is an acceptable bundle id (PROTOCOL.md §2): it
// matches ^[A-Za-z0-9_][A-Za-z0-9._-]*$ and is at most MaxIDLen bytes. The
// first-character rule excludes ".", ".." and hidden names, so a valid id is
// always a single, plain path component.
func ValidID(id string) bool {
	return len(id) <= MaxIDLen && idRE.MatchString(id)
}

// ValidAssetName reports whether name is an acceptable companion file name
// (PROTOCOL.md §6.1): non-empty, not "." or "..", no '/', '\\' or ':', valid
// UTF-8 without control characters (NUL included), at most MaxAssetNameLen
// bytes.
func ValidAssetName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > MaxAssetNameLen {
		return false
	}
	if !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		switch {
		case r == '/', r == '\\', r == ':':
			return false
		case unicode.IsControl(r):
			return false
		}
	}
	return true
}

// NameKind tells which kind of name an InvalidNameError is about.
type NameKind int

const (
	// KindBundleID is a bundle id (PROTOCOL.md §2).
	KindBundleID NameKind = iota
	// KindAssetName is a companion file name (PROTOCOL.md §6.1).
	KindAssetName
)

// String returns a human-readable name of the kind.
func (k NameKind) String() string {
	switch k {
	case KindBundleID:
		return "bundle id"
	case KindAssetName:
		return "asset filename"
	default:
		return fmt.Sprintf("NameKind(%d)", int(k))
	}
}

// InvalidNameError reports a bundle id or companion file name that is not
// acceptable. It means bad client input (HTTP 400), as opposed to an I/O
// failure; detect it with errors.As.
type InvalidNameError struct {
	Kind   NameKind
	Name   string
	Reason string // optional detail, e.g. why a syntactically valid name is refused
}

// Error implements error.
func (e *InvalidNameError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("invalid %s %q: %s", e.Kind, e.Name, e.Reason)
	}
	return fmt.Sprintf("invalid %s %q", e.Kind, e.Name)
}

func checkID(id string) error {
	if !ValidID(id) {
		return &InvalidNameError{Kind: KindBundleID, Name: id}
	}
	return nil
}

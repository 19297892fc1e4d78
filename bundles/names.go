// Package bundles is gorender's on-disk bundle cache: bundle id and companion
// file name validation, the cache layout of PROTOCOL.md §6.3, streaming of
// uploaded parts into per-request staging directories, the first-writer-wins
// store with per-id locking (in process and across processes), sweeping of
// abandoned staging directories, holds on bundles in use and pruning of the
// least recently used ones to a size limit. It knows nothing of JavaScript or
// HTTP.
package bundles

import (
	"fmt"
	"strings"
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

// layoutNames are the names the cache layout (PROTOCOL.md §6.3) gives its
// own entries in the root, besides the bundles' directories: no bundle id
// may be one of them, in any letter case (the cache may live on a
// case-insensitive file system), or a render would read the layout's files
// as a bundle's (id "uploads" had the staging directory, with other
// clients' uploads in flight, as its fs root). Every other name of the
// layout starts with '.', which no id may: .current-generations/, the
// renames of pruning and of companion files being written. Inside a
// bundle's directory the names are derived from its own id. A new name in
// the root is either added here or starts with '.' (TestLayoutNamesAreNotIDs).
var layoutNames = []string{uploadsDir}

// ValidID reports whether id is an acceptable bundle id (PROTOCOL.md §2):
// IDProblem has nothing to say about it.
func ValidID(id string) bool {
	return IDProblem(id) == ""
}

// IDProblem says why id is not an acceptable bundle id, as the end of a
// sentence, or "" when it is: it must match ^[A-Za-z0-9_][A-Za-z0-9._-]*$
// (so it is a single, plain path component: the first-character rule
// excludes ".", ".." and hidden names), be at most MaxIDLen bytes, and not
// be a name of the cache layout.
func IDProblem(id string) string {
	if !idShape(id) {
		return "Expected letters, digits, '_', '.' and '-', not starting with '.' or '-'"
	}
	if len(id) > MaxIDLen {
		return fmt.Sprintf("Expected at most %d bytes", MaxIDLen)
	}
	for _, name := range layoutNames {
		if strings.EqualFold(id, name) {
			return "The bundle cache uses this name for itself"
		}
	}
	return ""
}

// idShape reports whether id matches ^[A-Za-z0-9_][A-Za-z0-9._-]*$. It is
// written out rather than a regexp: every render checks its bundles' ids
// twice, and the regexp was 1.5% of a hello render's CPU on goja.
func idShape(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case (c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
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
	if problem := IDProblem(id); problem != "" {
		return &InvalidNameError{Kind: KindBundleID, Name: id, Reason: problem}
	}
	return nil
}

package inproc

// What the host functions do for the Node-compatible environment: what is
// hot or security-sensitive is done here in Go (the bundle's confined file
// system, hashes, random bytes, UTF-8), and each engine only converts values.

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// nodeCompatVersion is the Node version gorender's environment claims in
// process.version and process.versions.node: the API level it follows.
const nodeCompatVersion = "20.0.0"

// processStart is performance.timeOrigin for every runtime of the process.
var processStart = time.Now()

// nodeArch is process.arch for the Go architecture.
func nodeArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	default:
		return runtime.GOARCH
	}
}

// fsError is a Node-style file system error: code (ENOENT…), errno, the
// syscall and the path the caller gave. The JS side builds the Error.
type fsError struct {
	// Name is the error's constructor; "" is Error.
	Name    string
	Code    string
	Errno   int
	Syscall string
	Path    string
	Message string
}

func (e *fsError) Error() string { return e.Message }

// hostError is the Node-style Error JavaScript sees, its properties in
// Node's order.
func (e *fsError) hostError() *HostError {
	name := e.Name
	if name == "" {
		name = "Error"
	}
	return &HostError{Name: name, Message: e.Message, Props: []Prop{
		{"errno", e.Errno}, {"code", e.Code}, {"syscall", e.Syscall}, {"path", e.Path},
	}}
}

var errnoText = map[string]struct {
	errno int
	text  string
}{
	"ENOENT":  {-2, "no such file or directory"},
	"EISDIR":  {-21, "illegal operation on a directory"},
	"ENOTDIR": {-20, "not a directory"},
	"EROFS":   {-30, "read-only file system"},
	"EACCES":  {-13, "permission denied"},
	"EINVAL":  {-22, "invalid argument"},
}

func newFSError(code, syscallName, path string) *fsError {
	t := errnoText[code]
	msg := fmt.Sprintf("%s: %s, %s '%s'", code, t.text, syscallName, path)
	if code == "EISDIR" && syscallName == "read" {
		msg = "EISDIR: illegal operation on a directory, read"
	}
	return &fsError{Code: code, Errno: t.errno, Syscall: syscallName, Path: path, Message: msg}
}

// bundleFS is the read-only file system a bundle sees: its own directory
// (companion files such as loadable-stats.json) and nothing else. Paths are
// resolved lexically first, then with their symlinks, and must stay inside
// the directory both times; anything else is ENOENT, as if absent.
type bundleFS struct {
	dir        string // the bundle's directory as given (cleaned, absolute)
	realDir    string // dir with symlinks resolved; "" when it does not exist
	bundleReal string // the bundle file itself, symlinks resolved (may live elsewhere)
}

// newBundleFS confines reads to the directory of the bundle at path. An empty
// path (a bundle not on disk) gives a file system where nothing exists.
func newBundleFS(path string) *bundleFS {
	if path == "" {
		return &bundleFS{}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return &bundleFS{}
	}
	f := &bundleFS{dir: filepath.Dir(abs)}
	if real, err := filepath.EvalSymlinks(f.dir); err == nil {
		f.realDir = real
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		f.bundleReal = real
	}
	return f
}

// fail is the error of a call on path p, which names p relative to the
// bundle directory: the error's message and stack reach the 400 answer of a
// render that does not catch it, and clients must not see the server's cache
// path (PROTOCOL.md §5).
func (f *bundleFS) fail(code, syscallName, p string) *fsError {
	return newFSError(code, syscallName, f.shown(p))
}

// shown is p as an fs error names it: an absolute path relative to the
// bundle directory (process.cwd(), so it still names the same file), a
// relative one as the bundle gave it.
func (f *bundleFS) shown(p string) string {
	if !filepath.IsAbs(p) || f.dir == "" {
		return p
	}
	clean := filepath.Clean(p)
	dir := f.dir
	if !within(clean, f.dir) && within(clean, f.realDir) {
		dir = f.realDir
	}
	rel, err := filepath.Rel(dir, clean)
	if err != nil {
		return ""
	}
	return rel
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	if p == dir {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// resolve maps a path given by bundle code to a real path inside the bundle
// directory. Relative paths are relative to the bundle directory (which is
// also process.cwd()).
func (f *bundleFS) resolve(p, syscallName string) (string, *fsError) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", f.fail("ENOENT", syscallName, p)
	}
	if f.dir == "" {
		return "", f.fail("ENOENT", syscallName, p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(f.dir, abs)
	}
	abs = filepath.Clean(abs)
	// Lexical check first, so that nothing outside is even looked at.
	if !within(abs, f.dir) && !within(abs, f.realDir) {
		return "", f.fail("ENOENT", syscallName, p)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) && errno == syscall.ENOTDIR {
			return "", f.fail("ENOTDIR", syscallName, p)
		}
		return "", f.fail("ENOENT", syscallName, p)
	}
	if !within(real, f.realDir) && real != f.bundleReal {
		return "", f.fail("ENOENT", syscallName, p)
	}
	return real, nil
}

// readFile returns the file's bytes; a file larger than limit bytes is
// not read (a RangeError, as Node's ERR_FS_FILE_TOO_LARGE).
func (f *bundleFS) readFile(p string, limit AllocLimit) ([]byte, *fsError) {
	real, ferr := f.resolve(p, "open")
	if ferr != nil {
		return nil, ferr
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, f.fail("ENOENT", "open", p)
	}
	if st.IsDir() {
		return nil, f.fail("EISDIR", "read", p)
	}
	tooLarge := func(size int64) *fsError {
		return &fsError{Name: "RangeError", Code: "ERR_FS_FILE_TOO_LARGE", Path: f.shown(p),
			Message: fmt.Sprintf("File size (%d) is greater than %s", size, limit)}
	}
	if !limit.Fits(st.Size()) {
		return nil, tooLarge(st.Size())
	}
	file, err := os.Open(real)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, f.fail("EACCES", "open", p)
		}
		return nil, f.fail("ENOENT", "open", p)
	}
	defer file.Close()
	// The file may have grown since it was measured.
	b, err := io.ReadAll(io.LimitReader(file, int64(limit)+1))
	if err != nil {
		return nil, f.fail("EISDIR", "read", p)
	}
	if !limit.Fits(int64(len(b))) {
		return nil, tooLarge(int64(len(b)))
	}
	return b, nil
}

// fileStat is what fs.Stats needs.
type fileStat struct {
	IsDir   bool
	Size    int64
	Mode    uint32
	MtimeMs float64
}

func (f *bundleFS) stat(p string) (fileStat, *fsError) {
	real, ferr := f.resolve(p, "stat")
	if ferr != nil {
		return fileStat{}, ferr
	}
	st, err := os.Stat(real)
	if err != nil {
		return fileStat{}, f.fail("ENOENT", "stat", p)
	}
	mode := uint32(st.Mode().Perm())
	if st.IsDir() {
		mode |= syscall.S_IFDIR
	} else {
		mode |= syscall.S_IFREG
	}
	return fileStat{
		IsDir:   st.IsDir(),
		Size:    st.Size(),
		Mode:    mode,
		MtimeMs: float64(st.ModTime().UnixNano()) / 1e6,
	}, nil
}

// dirEntry is one fs.readdirSync entry.
type dirEntry struct {
	Name  string
	IsDir bool
}

func (f *bundleFS) readDir(p string) ([]dirEntry, *fsError) {
	real, ferr := f.resolve(p, "scandir")
	if ferr != nil {
		return nil, ferr
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) && errno == syscall.ENOTDIR {
			return nil, f.fail("ENOTDIR", "scandir", p)
		}
		return nil, f.fail("ENOENT", "scandir", p)
	}
	out := make([]dirEntry, 0, len(entries))
	for _, e := range entries {
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(real, e.Name())); err == nil {
				isDir = st.IsDir()
			}
		}
		out = append(out, dirEntry{Name: e.Name(), IsDir: isDir})
	}
	return out, nil
}

// realpath returns the path as bundle code should see it: inside the bundle
// directory as given (not the symlink-resolved cache location).
func (f *bundleFS) realpath(p string) (string, *fsError) {
	real, ferr := f.resolve(p, "realpath")
	if ferr != nil {
		return "", ferr
	}
	if real == f.bundleReal {
		return filepath.Join(f.dir, filepath.Base(real)), nil
	}
	rel, err := filepath.Rel(f.realDir, real)
	if err != nil {
		return "", f.fail("ENOENT", "realpath", p)
	}
	return filepath.Join(f.dir, rel), nil
}

// newHash returns the hash for a Node digest name, keyed (HMAC) when key is
// not nil.
func newHash(name string, key []byte) (hash.Hash, bool) {
	var h func() hash.Hash
	switch strings.ToLower(name) {
	case "md5":
		h = md5.New
	case "sha1", "sha-1":
		h = sha1.New
	case "sha224", "sha-224":
		h = sha256.New224
	case "sha256", "sha-256":
		h = sha256.New
	case "sha384", "sha-384":
		h = sha512.New384
	case "sha512", "sha-512":
		h = sha512.New
	default:
		return nil, false
	}
	if key != nil {
		return hmac.New(h, key), true
	}
	return h(), true
}

// randomBytes returns n cryptographically random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// randomUUID returns a version 4 UUID.
func randomUUID() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// utf8Decode decodes UTF-8 as the WHATWG Encoding Standard does: each
// maximal invalid subpart becomes one U+FFFD (or an error when fatal). With
// stream, an incomplete sequence at the end is returned as pending, to be
// prepended to the next chunk. The byte order mark is the caller's business.
func utf8Decode(pending, chunk []byte, stream, fatal bool) (text string, rest []byte, ok bool) {
	if len(pending) == 0 && utf8.Valid(chunk) {
		return string(chunk), nil, true
	}
	in := chunk
	if len(pending) > 0 {
		in = append(append(make([]byte, 0, len(pending)+len(chunk)), pending...), chunk...)
	}
	var b strings.Builder
	b.Grow(len(in))
	i := 0
	for i < len(in) {
		c := in[i]
		if c < 0x80 {
			b.WriteByte(c)
			i++
			continue
		}
		need, lower, upper := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			if c == 0xE0 {
				lower = 0xA0
			} else if c == 0xED {
				upper = 0x9F
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lower = 0x90
			} else if c == 0xF4 {
				upper = 0x8F
			}
		default:
			if fatal {
				return "", nil, false
			}
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j := i + 1
		valid := true
		for k := 0; k < need; k++ {
			if j >= len(in) {
				// Input ended inside a valid prefix.
				if stream {
					return b.String(), append([]byte(nil), in[i:]...), true
				}
				valid = false
				break
			}
			lo, hi := byte(0x80), byte(0xBF)
			if k == 0 {
				lo, hi = lower, upper
			}
			if in[j] < lo || in[j] > hi {
				valid = false
				break
			}
			j++
		}
		if !valid {
			if fatal {
				return "", nil, false
			}
			b.WriteRune(utf8.RuneError)
			i = j // the maximal subpart; the offending byte is read again
			continue
		}
		b.Write(in[i:j])
		i = j
	}
	return b.String(), nil, true
}

// utf8EncodeInto writes the UTF-8 of the UTF-16 string s (as runes, lone
// surrogates already replaced by U+FFFD) into dst, whole characters only,
// and returns the UTF-16 units read and the bytes written.
func utf8EncodeInto(s string, dst []byte) (read, written int) {
	for _, r := range s {
		n := utf8.RuneLen(r)
		if n < 0 {
			r, n = utf8.RuneError, 3
		}
		if written+n > len(dst) {
			break
		}
		utf8.EncodeRune(dst[written:], r)
		written += n
		if r >= 0x10000 {
			read += 2
		} else {
			read++
		}
	}
	return read, written
}

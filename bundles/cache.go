package bundles

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

const (
	uploadsDir = "uploads"

	// defaultLockStale is how old (by mtime) a <id>.js.lock may get before
	// another writer considers its holder dead and takes it over (§6.3).
	defaultLockStale = 20 * time.Second
	// defaultLockPoll is the wait between attempts to take a held lock file.
	defaultLockPoll = 50 * time.Millisecond

	copyBufSize = 64 << 10

	dirPerm  = 0o755
	filePerm = 0o644
)

// Cache is the on-disk bundle cache rooted at one directory (layout in
// PROTOCOL.md §6.3). It is safe for concurrent use, and several processes
// (pods sharing a volume) may use the same root at once.
type Cache struct {
	root   string
	logger *slog.Logger

	locks   keyedMutex
	bufPool sync.Pool // *[]byte of copyBufSize

	// stored wakes the pruner after a store added bytes (capacity 1).
	stored    chan struct{}
	noDirLock sync.Once  // warn once that flock is not available
	freeMu    sync.Mutex // FreeSpace calls take turns

	heldMu sync.Mutex
	held   map[string]int // bundle id → holds this process has on it (Hold)

	// Lock-file timings and PruneMinIdle; tests shorten them.
	lockStale    time.Duration
	lockPoll     time.Duration
	pruneMinIdle time.Duration
}

// Open returns the cache rooted at root, creating root and root/uploads if
// needed. root is made absolute. A nil logger discards logs.
func Open(root string, logger *slog.Logger) (*Cache, error) {
	if root == "" {
		return nil, fmt.Errorf("open bundle cache: empty root path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open bundle cache %q: %w", root, err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Join(abs, uploadsDir), dirPerm); err != nil {
		return nil, fmt.Errorf("open bundle cache %q: %w", abs, err)
	}
	c := &Cache{
		root:         abs,
		logger:       logger.With("component", "bundles"),
		locks:        keyedMutex{m: make(map[string]*keyedEntry)},
		held:         make(map[string]int),
		stored:       make(chan struct{}, 1),
		lockStale:    defaultLockStale,
		lockPoll:     defaultLockPoll,
		pruneMinIdle: PruneMinIdle,
	}
	c.bufPool.New = func() any {
		b := make([]byte, copyBufSize)
		return &b
	}
	return c, nil
}

// Root returns the absolute path of the cache root.
func (c *Cache) Root() string { return c.root }

// Dir returns the directory of bundle id: <root>/<id>. It does not validate
// id; use ValidID first when id comes from a client.
func (c *Cache) Dir(id string) string { return filepath.Join(c.root, id) }

// BundlePath returns the path of bundle id: <root>/<id>/<id>.js. It does not
// validate id.
func (c *Cache) BundlePath(id string) string {
	return filepath.Join(c.root, id, id+bundleSuffix)
}

func (c *Cache) lockPath(id string) string {
	return filepath.Join(c.root, id, id+lockSuffix)
}

// rel is path relative to the cache root, for logs and errors: the same on
// every replica, and no server path in an answer.
func (c *Cache) rel(path string) string {
	if r, err := filepath.Rel(c.root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func (c *Cache) uploadsPath() string { return filepath.Join(c.root, uploadsDir) }

// Has reports whether bundle id is present: id is valid and <id>.js, after
// following symlinks (e.g. a relative link into <root>.artifact-snapshots),
// is a regular file. A directory, a dangling symlink or an absent file is not
// present. A lone <id>.js.lock or staged upload never makes Has true.
func (c *Cache) Has(id string) bool {
	if !ValidID(id) {
		return false
	}
	return isRegular(c.BundlePath(id))
}

// Missing returns the ids of ids that are not present (see Has), in the order
// given; nil when all are present. It is the render path's check (the 410 of
// PROTOCOL.md §4), so a bundle this process holds counts as present without
// looking at the disk: nothing that follows the protocol removes a held
// bundle (every process's pruner skips it, §6.3), and a system call here
// would be the only one the Go scheduler sees on that path: after an idle
// spell it wakes the runtime's monitor thread, which then polls every 20 µs
// and preempts the renders on a shared CPU (a quarter of a node-engine hello
// render's CPU). A held bundle deleted by hand renders from memory until its
// runtimes are unloaded; then the next render answers 410 and Rails uploads
// it again.
func (c *Cache) Missing(ids []string) []string {
	var missing []string
	for _, id := range ids {
		if !c.isHeld(id) && !c.Has(id) {
			missing = append(missing, id)
		}
	}
	return missing
}

// ReadBundle returns the bytes of bundle id, following symlinks. An invalid id
// yields an *InvalidNameError; an absent bundle an error wrapping
// fs.ErrNotExist.
//
// A bundle that cannot be read (no permission, an I/O error), is empty, or
// differs from the record made when it was stored is moved aside (logged
// once, with its path in the cache) and yields a *CorruptError, which wraps
// fs.ErrNotExist: it is absent from then on, and the next upload stores a
// good copy.
func (c *Cache) ReadBundle(id string) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		b, err := os.ReadFile(c.BundlePath(id))
		why := ""
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("read bundle %s: %w", id, err)
		case err != nil:
			why = "it cannot be read: " + errText(err)
		default:
			why = c.problem(id, sumOfBytes(b))
		}
		if why == "" {
			return b, nil
		}
		if err := c.quarantineLoaded(id, why); err != nil || attempt == 1 {
			return nil, fmt.Errorf("read bundle %s: %w", id, cmp.Or(err, error(&CorruptError{ID: id, Path: c.rel(c.BundlePath(id)), Reason: why})))
		}
		// Repaired by a store meanwhile: read it again.
	}
}

// AssetExists reports whether companion file name exists as a regular file
// (following symlinks) beside bundle id (PROTOCOL.md §6.4). Invalid ids or
// names yield false.
func (c *Cache) AssetExists(id, name string) bool {
	if !ValidID(id) || !ValidAssetName(name) {
		return false
	}
	return isRegular(filepath.Join(c.root, id, name))
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func (c *Cache) getBuf() *[]byte  { return c.bufPool.Get().(*[]byte) }
func (c *Cache) putBuf(b *[]byte) { c.bufPool.Put(b) }

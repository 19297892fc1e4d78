// Package sourcemap rewrites the stack frames of an error's text from
// positions in a loaded bundle to positions in its original sources, when
// the bundle has a source map beside it in the cache: the file its
// `//# sourceMappingURL=` comment names (a file name, no path), else the
// companion `<bundle>.js.map`. It works on text, so every engine's errors
// pass through the same step (worker maps error answers and load errors;
// the in-process engines' getStackTrace calls it through a host function).
//
// A map is read and parsed the first time an error's text names its bundle,
// never at load, and parsed maps are kept within a memory bound, least
// recently used first out (RENDERER_SOURCE_MAP_CACHE_SIZE). A map's
// sourcesContent is dropped before parsing: stack frames need positions only.
//
// When an engine rewrote the bundle before compiling it (esbuild's lowering,
// string builds), positions in its errors are the rewritten code's: the
// engine replays its rewrites on the bundle's file with their own maps at
// that first error, and frames go through them, then through the bundle's
// map (or, without one, show the bundle's own positions). Those maps count
// in the same bound.
package sourcemap

import (
	"container/list"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sourcemap/sourcemap"
)

// Positions translates a position in the compiled program (the engine's
// CommonJS wrapper) to the same position in the bundle as uploaded; ok
// false when it cannot. Lines are 1-based, columns 0-based UTF-16 code
// units, as in source maps and every engine's frames (goja's and QuickJS's
// are converted by the engine, jsvm/inproc's Columns).
type Positions func(line, column int) (int, int, bool)

// Rewrites replays an engine's rewrites of a bundle (esbuild's lowering,
// string builds; jsvm.BundlePositions) on source, the bundle as uploaded:
// it returns how the compiled program's positions go back to source, and
// about how much memory that holds.
type Rewrites func(source string) (func(line, column int) (int, int, bool), int64, error)

// parsedCost is the memory of a parsed map per byte of its JSON without
// sourcesContent: the decoded mappings are 24-byte structs, one per 4-8
// bytes of base64 VLQ. Measured 5.4-6.0 on esbuild's maps (minified or not)
// of two 0.5-0.7 MB bundles.
const parsedCost = 6

// tailBytes is how much of a bundle's end is read for its
// sourceMappingURL comment.
const tailBytes = 4096

// Maps is the source maps of the loaded bundles. The zero of *Maps (nil)
// maps nothing.
type Maps struct {
	limit  int64
	logger *slog.Logger

	mu      sync.Mutex
	bundles map[string]*bundle // by the file name frames show: <id>.js
	lru     *list.List         // of *bundle with a parsed map, most recent first
	used    int64
}

// bundle is one loaded bundle and, once an error named it, its map.
type bundle struct {
	id, path  string
	positions Positions
	rewrites  Rewrites

	load sync.Mutex // held while the map is read and parsed
	// Under Maps.mu:
	state loadState
	maps  // once parsed
	cost  int64
	elem  *list.Element
}

// maps is what a bundle's frames go through: back from the compiled
// program to the bundle when the engine rewrote it (nil: positions), and
// the bundle's own map (nil when it has none: a rewritten bundle's frames
// then show its own positions).
type maps struct {
	back     func(line, column int) (int, int, bool)
	consumer *sourcemap.Consumer
}

type loadState int

const (
	notRead loadState = iota
	parsed
	absent // no map, or one that cannot be used: not looked for again
)

// New returns Maps that keep parsed maps within limit bytes; nil (no
// mapping) when limit is 0.
func New(limit int64, logger *slog.Logger) *Maps {
	if limit <= 0 {
		return nil
	}
	return &Maps{limit: limit, logger: logger, bundles: map[string]*bundle{}, lru: list.New()}
}

// Add registers the loaded bundle id, whose file is path; positions is nil
// when the compiled program's positions are the bundle's, rewrites nil
// when the engine did not rewrite it. Nothing is read until an error names
// the bundle.
func (m *Maps) Add(id, path string, positions Positions, rewrites Rewrites) {
	if m == nil || path == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.bundles[id+".js"]; old != nil {
		m.dropLocked(old)
	}
	m.bundles[id+".js"] = &bundle{id: id, path: path, positions: positions, rewrites: rewrites}
}

// Remove forgets bundle id and its parsed map (it was evicted).
func (m *Maps) Remove(id string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if b := m.bundles[id+".js"]; b != nil {
		m.dropLocked(b)
		delete(m.bundles, id+".js")
	}
}

func (m *Maps) dropLocked(b *bundle) {
	if b.elem != nil {
		m.lru.Remove(b.elem)
		m.used -= b.cost
		b.elem, b.maps, b.cost = nil, maps{}, 0
	}
	if b.state == parsed {
		b.state = notRead
	}
}

// frame is a position in a stack frame: [dir/]file:line:column, with
// goja's program counter "(n)" after it. A bundle's frames name <id>.js
// (V8's with the cache directory before it); the in-process engines' also
// name the render's code (renderingRequest).
var frame = regexp.MustCompile(`((?:[^\s()@'"]*/)?)([A-Za-z0-9_][A-Za-z0-9._-]*):(\d+):(\d+)(\(\d+\))?`)

// A Frame is a position in a stack frame's text.
type Frame struct {
	Dir          string // the directories before File, with the last "/"; "" for none
	File         string
	Line, Column int    // 1-based, in the unit the stack counts in
	PC           string // goja's program counter after the position, "(n)"; "" for none
}

// ReplaceFrames returns text with every frame position (its program
// counter included) replaced by what replace returns for it; the frames
// replace declines (ok false) stay as they are. Both steps a stack goes
// through read its frames here: the in-process engines' columns to UTF-16
// (jsvm/inproc), then Rewrite.
func ReplaceFrames(text string, replace func(Frame) (string, bool)) string {
	return frame.ReplaceAllStringFunc(text, func(match string) string {
		sub := frame.FindStringSubmatch(match)
		line, err1 := strconv.Atoi(sub[3])
		column, err2 := strconv.Atoi(sub[4])
		if err1 != nil || err2 != nil {
			return match
		}
		if out, ok := replace(Frame{Dir: sub[1], File: sub[2], Line: line, Column: column, PC: sub[5]}); ok {
			return out
		}
		return match
	})
}

// Rewrite returns text with every frame position in a registered bundle
// that has a source map replaced by its original source, line and column;
// in a bundle without one that the engine rewrote (lowered), by the
// bundle's own line and column. Frames it cannot map stay as they are.
func (m *Maps) Rewrite(text string) string {
	if m == nil || !strings.Contains(text, ".js:") {
		return text
	}
	return ReplaceFrames(text, func(f Frame) (string, bool) {
		m.mu.Lock()
		b := m.bundles[f.File]
		m.mu.Unlock()
		if b == nil {
			return "", false
		}
		source, line, column, ok := m.lookup(b, f.Line, f.Column-1)
		if !ok {
			return "", false
		}
		return fmt.Sprintf("%s:%d:%d", source, line, column+1), true
	})
}

// lookup maps a 1-based line and 0-based column of the compiled bundle.
func (m *Maps) lookup(b *bundle, line, column int) (string, int, int, bool) {
	bm, ok := m.mapsOf(b)
	if !ok {
		return "", 0, 0, false
	}
	back := bm.back
	if back == nil {
		back = b.positions
	}
	if back != nil {
		if line, column, ok = back(line, column); !ok {
			return "", 0, 0, false
		}
	}
	if bm.consumer == nil {
		return b.id + ".js", line, column, true
	}
	source, _, line, column, ok := bm.consumer.Source(line, column)
	if !ok || source == "" {
		return "", 0, 0, false
	}
	return displayName(source), line, column, true
}

// mapsOf returns b's parsed maps, reading them on first use; ok false when
// there is nothing to map b's frames with.
func (m *Maps) mapsOf(b *bundle) (maps, bool) {
	b.load.Lock()
	defer b.load.Unlock()
	m.mu.Lock()
	switch b.state {
	case parsed:
		m.lru.MoveToFront(b.elem)
		bm := b.maps
		m.mu.Unlock()
		return bm, true
	case absent:
		m.mu.Unlock()
		return maps{}, false
	}
	m.mu.Unlock()

	bm, cost, err := m.read(b)
	m.mu.Lock()
	defer m.mu.Unlock()
	found := err == nil && (bm.consumer != nil || bm.back != nil)
	if m.bundles[b.id+".js"] != b {
		return bm, found // removed meanwhile: answer this error, keep nothing
	}
	if !found {
		if err != nil {
			m.logger.Warn("source map not used", "bundle", b.id, "err", err)
		}
		b.state = absent
		return maps{}, false
	}
	b.state, b.maps, b.cost = parsed, bm, cost
	b.elem = m.lru.PushFront(b)
	m.used += cost
	for m.used > m.limit {
		oldest := m.lru.Back().Value.(*bundle)
		m.dropLocked(oldest)
	}
	return bm, true
}

// read finds and parses b's map, and replays the engine's rewrites of b
// when it made any. Neither is an error: b has nothing to map with.
func (m *Maps) read(b *bundle) (maps, int64, error) {
	c, cost, err := m.readMap(b)
	if err != nil || b.rewrites == nil {
		return maps{consumer: c}, cost, err
	}
	source, err := os.ReadFile(b.path)
	if err != nil {
		return maps{}, 0, fmt.Errorf("read bundle: %w", err)
	}
	back, backCost, err := b.rewrites(string(source))
	if err != nil {
		return maps{}, 0, err
	}
	if cost+backCost > m.limit {
		return maps{}, 0, fmt.Errorf("the positions of the engine's rewrites of the bundle take about %d bytes, more than RENDERER_SOURCE_MAP_CACHE_SIZE (%d) with its map", backCost, m.limit)
	}
	return maps{back: back, consumer: c}, cost + backCost, nil
}

// readMap finds and parses b's map: nil, 0, nil when it has none.
func (m *Maps) readMap(b *bundle) (*sourcemap.Consumer, int64, error) {
	file, err := MapFile(b.path)
	if err != nil || file == "" {
		return nil, 0, err
	}
	f, err := os.Open(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("open source map: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("source map: %w", err)
	}
	// A map whose parsed form cannot fit is not read at all.
	if info.Size() > m.limit {
		return nil, 0, fmt.Errorf("source map %s is %d bytes, more than RENDERER_SOURCE_MAP_CACHE_SIZE (%d)", filepath.Base(file), info.Size(), m.limit)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("read source map: %w", err)
	}
	data, err = withoutContent(data)
	if err != nil {
		return nil, 0, fmt.Errorf("source map %s: %w", filepath.Base(file), err)
	}
	cost := int64(len(data)) * parsedCost
	if cost > m.limit {
		return nil, 0, fmt.Errorf("source map %s would take about %d bytes parsed, more than RENDERER_SOURCE_MAP_CACHE_SIZE (%d)", filepath.Base(file), cost, m.limit)
	}
	c, err := sourcemap.Parse("", data)
	if err != nil {
		return nil, 0, fmt.Errorf("source map %s: %w", filepath.Base(file), err)
	}
	return c, cost, nil
}

// MapFile is the source map of the bundle at path: the file its
// sourceMappingURL comment names beside it, else <bundle>.js.map (which
// may not exist); "" when the comment names something else (a URL, a path,
// inline data).
func MapFile(bundlePath string) (string, error) {
	f, err := os.Open(bundlePath)
	if err != nil {
		return "", fmt.Errorf("read bundle: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read bundle: %w", err)
	}
	tail := make([]byte, min(info.Size(), tailBytes))
	if _, err := f.ReadAt(tail, info.Size()-int64(len(tail))); err != nil {
		return "", fmt.Errorf("read bundle: %w", err)
	}
	if url, ok := mappingURL(string(tail)); ok {
		if url == "" || strings.ContainsAny(url, `/\:`) || url == "." || url == ".." {
			return "", nil
		}
		return filepath.Join(filepath.Dir(bundlePath), url), nil
	}
	return bundlePath + ".map", nil
}

// mappingURL is the last sourceMappingURL comment of a bundle's end.
func mappingURL(tail string) (string, bool) {
	i := max(strings.LastIndex(tail, "//# sourceMappingURL="), strings.LastIndex(tail, "//@ sourceMappingURL="))
	if i < 0 {
		return "", false
	}
	url, _, _ := strings.Cut(tail[i+len("//# sourceMappingURL="):], "\n")
	return strings.TrimSpace(url), true
}

// withoutContent returns a map's JSON without sourcesContent (nor that of
// an indexed map's sections).
func withoutContent(data []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if _, ok := doc["sourcesContent"]; !ok {
		if _, ok := doc["sections"]; !ok {
			return data, nil
		}
	}
	delete(doc, "sourcesContent")
	if raw, ok := doc["sections"]; ok {
		var sections []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &sections); err != nil {
			return nil, err
		}
		for _, s := range sections {
			var sub map[string]json.RawMessage
			if json.Unmarshal(s["map"], &sub) == nil {
				delete(sub, "sourcesContent")
				s["map"], _ = json.Marshal(sub)
			}
		}
		doc["sections"], _ = json.Marshal(sections)
	}
	return json.Marshal(doc)
}

// displayName is a map's source as a reader knows it: without a bundler's
// scheme and namespace (webpack://app/) and the ../ that lead from the
// map's directory back to the sources.
func displayName(source string) string {
	if rest, ok := strings.CutPrefix(source, "webpack://"); ok {
		if _, after, ok := strings.Cut(rest, "/"); ok {
			source = after
		}
	}
	source = path.Clean(source)
	for strings.HasPrefix(source, "../") {
		source = source[3:]
	}
	return source
}

package jsvm

import "sync"

// SharedContext holds the entries of one HTTP request's
// sharedExecutionContext. Every runtime of the request sees the same entries:
// a runtime reading its own value gets it back unchanged; another runtime gets
// a copy (primitives as they are, objects through JSON).
type SharedContext struct {
	mu      sync.Mutex
	keys    []any
	entries map[any]sharedEntry
}

type sharedEntry struct {
	owner any // the engine runtime that stored the value
	value any // engine value, meaningful to its owner only
}

// NewSharedContext returns an empty shared context. A nil *SharedContext
// (a runtime between renders) reads as empty and ignores writes.
func NewSharedContext() *SharedContext {
	return &SharedContext{entries: make(map[any]sharedEntry)}
}

func (s *SharedContext) get(key any) (sharedEntry, bool) {
	if s == nil {
		return sharedEntry{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	return e, ok
}

func (s *SharedContext) set(key any, e sharedEntry) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.entries[key] = e
}

func (s *SharedContext) remove(key any) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[key]; !ok {
		return false
	}
	delete(s.entries, key)
	for i, k := range s.keys {
		if k == key {
			s.keys = append(s.keys[:i], s.keys[i+1:]...)
			break
		}
	}
	return true
}

func (s *SharedContext) clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = nil
	clear(s.entries)
}

func (s *SharedContext) keyList() []any {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]any(nil), s.keys...)
}

// HostSet is a host value that reads as a JS Set of strings.
type HostSet []string

// HostFunc is a host value that reads as a JS function; its arguments
// arrive as strings. It runs on the render's goroutine.
type HostFunc func(args ...string)

// SetHost puts a value from the host into the shared context before a
// render: a string, bool or number, a HostSet or a HostFunc.
func (s *SharedContext) SetHost(key string, value any) {
	s.set(key, sharedEntry{owner: nil, value: value})
}

package jsvm

import "sync"

// SharedContext holds the entries of one HTTP request's
// sharedExecutionContext (PROTOCOL.md §7). Every runtime of the request sees
// the same entries: a runtime reading its own value gets it back unchanged;
// another runtime gets a copy (primitives as they are, objects through JSON).
// Keys are strings, float64 numbers or booleans. It is safe for concurrent
// use.
type SharedContext struct {
	mu      sync.Mutex
	keys    []any
	entries map[any]SharedEntry
}

// SharedEntry is one entry of a shared context: set by a runtime (Owner, the
// only one that holds the value itself; Value is what that engine keeps of
// it, if anything), or put by the host before the render (Owner nil, Value
// the host value: see SetHost).
type SharedEntry struct {
	Owner any
	Value any
}

// NewSharedContext returns an empty shared context. A nil *SharedContext
// (a runtime between renders) reads as empty and ignores writes.
func NewSharedContext() *SharedContext {
	return &SharedContext{entries: make(map[any]SharedEntry)}
}

// Get returns the entry of key.
func (s *SharedContext) Get(key any) (SharedEntry, bool) {
	if s == nil {
		return SharedEntry{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	return e, ok
}

// Set stores the entry of key, keeping its place in the key order if it
// had one.
func (s *SharedContext) Set(key any, e SharedEntry) {
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

// Delete removes key and reports whether it was there.
func (s *SharedContext) Delete(key any) bool {
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

// Clear removes every entry.
func (s *SharedContext) Clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = nil
	clear(s.entries)
}

// Keys returns the keys in the order they were first set.
func (s *SharedContext) Keys() []any {
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
	s.Set(key, SharedEntry{Owner: nil, Value: value})
}

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ---- Answers --------------------------------------------------------------

// answerCheck compares every server's answer to a request: with the
// expected answer where there is one (Node's golden, or the golden with a
// variant's change), and across servers always.
type answerCheck struct {
	mu    sync.Mutex
	first map[string]string // request key -> "variant sha"
	notes []string
}

// goldens are Node's answers to the workloads' requests.
var goldens = map[string]string{"hello": "golden/hello.html", "small": "golden/small-page.html", "medium": "golden/list-page.html"}

func newAnswerCheck() *answerCheck { return &answerCheck{first: map[string]string{}} }

// check returns a note when body is not golden (if not empty) or not the
// first server's answer to the same request (key).
func (a *answerCheck) check(key, variant, body, golden string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	sum := sha256.Sum256([]byte(body))
	sha := hex.EncodeToString(sum[:8])
	if golden != "" && golden != body {
		note := fmt.Sprintf("MISMATCH: %s %s differs from Node's golden", variant, key)
		a.notes = append(a.notes, note)
		return note
	}
	prev, ok := a.first[key]
	if !ok {
		a.first[key] = variant + " " + sha
		a.notes = append(a.notes, fmt.Sprintf("%s: %d bytes, sha256 %s… (%s)", key, len(body), sha, variant))
		return ""
	}
	if !strings.HasSuffix(prev, " "+sha) {
		note := fmt.Sprintf("MISMATCH: %s %s answer sha %s, %s", variant, key, sha, prev)
		a.notes = append(a.notes, note)
		return note
	}
	return ""
}

func (a *answerCheck) summary() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.notes)
}

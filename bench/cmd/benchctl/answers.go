package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gorender/gorender/bench"
)

// ---- Answers --------------------------------------------------------------

// answerCheck compares every server's answer to a workload: with Node's
// golden where there is one, and across servers always.
type answerCheck struct {
	mu    sync.Mutex
	first map[string]string // workload -> "variant sha"
	notes []string
}

var goldens = map[string]string{"hello": "golden/hello.html", "small": "golden/small-page.html", "medium": "golden/list-page.html"}

func newAnswerCheck() *answerCheck { return &answerCheck{first: map[string]string{}} }

func (a *answerCheck) check(workload, variant, body string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	sum := sha256.Sum256([]byte(body))
	sha := hex.EncodeToString(sum[:8])
	if g, ok := goldens[workload]; ok {
		want, err := bench.ReadTestdata(g)
		if err == nil && want != body {
			note := fmt.Sprintf("MISMATCH: %s %s differs from Node's golden", variant, workload)
			a.notes = append(a.notes, note)
			return note
		}
	}
	prev, ok := a.first[workload]
	if !ok {
		a.first[workload] = variant + " " + sha
		a.notes = append(a.notes, fmt.Sprintf("%s: %d bytes, sha256 %s… (%s)", workload, len(body), sha, variant))
		return ""
	}
	if !strings.HasSuffix(prev, " "+sha) {
		note := fmt.Sprintf("MISMATCH: %s %s answer sha %s, %s", variant, workload, sha, prev)
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

package bench

import (
	"fmt"
	"strings"
)

// DefaultVariants is how many distinct requests a page workload rotates
// through by default.
const DefaultVariants = 32

// titleKey starts the first list item's title in a ListPage request's props.
const titleKey = `"title":"`

// titleMarkup starts the first list item's title in ListPage's answer (the
// HTML inside react-on-rails' JSON result, so its quotes are escaped).
const titleMarkup = `class=\"item-title\">`

// tagLen is the length of a variant's tag: "v000" to "v999".
const tagLen = 4

// Variants returns n distinct versions of a ListPage rendering request, as
// real traffic sends them: variant i has the first 4 bytes of the first
// item's title replaced by "v%03d" of i. Every variant has the request's
// length and renders the same page with those 4 bytes changed
// (VariantAnswer), so each costs the same to parse and render, but no two
// share a source: V8 cannot answer one from its compilation cache of
// another.
func Variants(code string, n int) ([]string, error) {
	if n < 1 || n > 1000 {
		return nil, fmt.Errorf("variants: %d, want 1 to 1000", n)
	}
	at, _, err := titleAt(code, titleKey)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = code[:at] + tag(i) + code[at+tagLen:]
	}
	return out, nil
}

// VariantAnswer returns the answer to variant i of a request, given the
// answer to the request itself: the same page with the first title's first
// 4 bytes replaced by the variant's tag.
func VariantAnswer(code, answer string, i int) (string, error) {
	_, orig, err := titleAt(code, titleKey)
	if err != nil {
		return "", fmt.Errorf("request: %w", err)
	}
	at, got, err := titleAt(answer, titleMarkup)
	if err != nil {
		return "", fmt.Errorf("answer: %w", err)
	}
	if got != orig {
		return "", fmt.Errorf("answer: the first title starts %q, the request's %q", got, orig)
	}
	return answer[:at] + tag(i) + answer[at+tagLen:], nil
}

func tag(i int) string { return fmt.Sprintf("v%03d", i) }

// titleAt finds the first title after key and returns where it starts and
// its first tagLen bytes, which must be plain ASCII letters, digits or
// spaces (so they read the same in JSON, HTML and the JSON around it).
func titleAt(s, key string) (int, string, error) {
	k := strings.Index(s, key)
	if k < 0 {
		return 0, "", fmt.Errorf("no %s in it: not a ListPage", key)
	}
	at := k + len(key)
	if at+tagLen > len(s) {
		return 0, "", fmt.Errorf("the first title is shorter than %d bytes", tagLen)
	}
	head := s[at : at+tagLen]
	for _, c := range []byte(head) {
		if !(c == ' ' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return 0, "", fmt.Errorf("the first title starts %q: not plain ASCII", head)
		}
	}
	return at, head, nil
}

package transform

import (
	"strings"
	"testing"
)

func TestRewritePropertyEscapes(t *testing.T) {
	out, err := RewritePropertyEscapes(`[\p{Lu}x]\P{ASCII}\\p{L}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, `[\u{41}-\u{5A}`) || !strings.Contains(out, `x][^\u{0}-\u{7F}]`) || !strings.HasSuffix(out, `\\p{L}`) {
		t.Fatalf("rewrite: %s", out)
	}
	if _, err := RewritePropertyEscapes(`\p{Nonsense}`); err == nil || !strings.Contains(err.Error(), `no Unicode data for \p{Nonsense}`) {
		t.Fatalf("unknown property: %v", err)
	}
	// Go has no table for Emoji: Node's (unicodeprops_gen.go) serves it.
	if out, err := RewritePropertyEscapes(`\p{EPres}`); err != nil || !strings.HasPrefix(out, `[\u{231A}-\u{231B}`) {
		t.Fatalf("Emoji_Presentation: %s %v", out, err)
	}
}

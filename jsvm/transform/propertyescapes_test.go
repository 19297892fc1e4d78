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
	if _, err := RewritePropertyEscapes(`\p{Emoji}`); err == nil {
		t.Fatal("unknown property accepted")
	}
}

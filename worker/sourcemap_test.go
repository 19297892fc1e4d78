package worker

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/sourcemap"
)

// TestMappedError: the step every engine's errors pass through maps the
// frames of a JavaScript error's answer and of a load error's text (which
// still wraps its cause), and leaves other answers alone.
func TestMappedError(t *testing.T) {
	dir := t.TempDir()
	fixtures := filepath.Join("..", "tests", "testdata", "sourcemap", "bundles")
	js, err := os.ReadFile(filepath.Join(fixtures, "sourcemap-app.js"))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := os.ReadFile(filepath.Join(fixtures, "sourcemap-app.js.map"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "app.js")
	if err := os.WriteFile(path, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sourcemap-app.js.map"), sm, 0o644); err != nil {
		t.Fatal(err)
	}
	maps := sourcemap.New(1<<20, slog.New(slog.DiscardHandler))
	maps.Add("app", path, nil, nil)
	frame := fmt.Sprintf("at r (app.js:1:%d)", strings.Index(string(js), "new Error")+1)
	const original = "at r (src/greeting.js:8:9)"

	js1 := &jsvm.RenderError{Kind: jsvm.KindJS, Text: "STACK:\n" + frame}
	if got := mappedError(maps, js1).(*jsvm.RenderError); got.Text != "STACK:\n"+original || got.Kind != jsvm.KindJS {
		t.Errorf("JavaScript error: %+v", got)
	}
	timeout := &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: frame}
	if got := mappedError(maps, timeout); got != error(timeout) {
		t.Errorf("a timeout's answer was rewritten: %v", got)
	}
	load := fmt.Errorf("load bundle app: boom\n%s: %w", frame, fs.ErrNotExist)
	got := mappedError(maps, load)
	if !strings.Contains(got.Error(), original) || !errors.Is(got, fs.ErrNotExist) {
		t.Errorf("load error: %v (wraps ErrNotExist: %v)", got, errors.Is(got, fs.ErrNotExist))
	}
	if got := mappedError(nil, js1); got != error(js1) {
		t.Errorf("without maps the error changed: %v", got)
	}
}

package handlers

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func frame(meta, content string) string {
	return fmt.Sprintf("%s\t%08x\n%s", meta, len(content), content)
}

func TestFrameWriterInjectsOnlyBetweenFrames(t *testing.T) {
	a := frame(`{"payloadType":"html"}`, "<div>héllo 🚀</div>")
	b := frame(`{"payloadType":"html"}`, "<p>second</p>")
	stream := a + b
	req := string(propRequestFrame("comments"))
	// Cut the stream at every position; inject right after the first piece.
	for cut := 0; cut <= len(stream); cut++ {
		var out bytes.Buffer
		fw := newFrameWriter(&out)
		if _, err := fw.Write([]byte(stream[:cut])); err != nil {
			t.Fatal(err)
		}
		if err := fw.Inject([]byte(req)); err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write([]byte(stream[cut:])); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		var want string
		switch {
		case cut == 0:
			want = req + a + b
		case cut <= len(a):
			want = a + req + b
		default:
			want = a + b + req
		}
		if got != want {
			t.Fatalf("cut %d:\ngot  %q\nwant %q", cut, got, want)
		}
	}
}

func TestFrameWriterUnframedOutputPassesThrough(t *testing.T) {
	var out bytes.Buffer
	fw := newFrameWriter(&out)
	_, _ = fw.Write([]byte("<html>not framed\n"))
	_ = fw.Inject(renderCompleteFrame)
	_, _ = fw.Write([]byte("</html>"))
	want := "<html>not framed\n" + string(renderCompleteFrame) + "</html>"
	if out.String() != want {
		t.Fatalf("got %q", out.String())
	}
}

func TestPropRequestFrame(t *testing.T) {
	got := string(propRequestFrame(`a"b`))
	if got != "{\"messageType\":\"propRequest\",\"propName\":\"a\\\"b\"}\t00000000\n" {
		t.Fatalf("got %q", got)
	}
	if !strings.HasSuffix(string(renderCompleteFrame), "\t00000000\n") {
		t.Fatal("renderComplete frame")
	}
}

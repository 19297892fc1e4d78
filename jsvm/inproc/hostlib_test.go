package inproc

import "testing"

func TestUTF8DecodeStreamingAtEverySplit(t *testing.T) {
	full := []byte("aé€😀z\xf0\x9f\x98\x80")
	want, _, _ := utf8Decode(nil, full, false, false)
	for i := 0; i <= len(full); i++ {
		for j := i; j <= len(full); j++ {
			var got string
			var pending []byte
			for _, part := range [][]byte{full[:i], full[i:j], full[j:]} {
				s, rest, ok := utf8Decode(pending, part, true, false)
				if !ok {
					t.Fatal("not ok")
				}
				got += s
				pending = rest
			}
			s, _, _ := utf8Decode(pending, nil, false, false)
			got += s
			if got != want {
				t.Fatalf("split %d,%d: %q want %q", i, j, got, want)
			}
		}
	}
	if _, _, ok := utf8Decode(nil, []byte{0x61, 0xc3}, false, true); ok {
		t.Fatal("fatal decode of a truncated sequence succeeded")
	}
}

package handlers

import (
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkQueryUnescape decodes the medium page's rendering request as the
// gem form-encodes it (the large page's request has the same text, 7 times
// longer), alone: DecodeBody's share beyond reading the body.
func BenchmarkQueryUnescape(b *testing.B) {
	code, err := os.ReadFile(filepath.Join("..", "tests", "testdata", "requests", "list-page.js"))
	if err != nil {
		b.Fatal(err)
	}
	encoded := []byte(url.QueryEscape(string(code)))
	buf := make([]byte, len(encoded))
	b.SetBytes(int64(len(encoded)))
	cpu := processCPU(b)
	for b.Loop() {
		copy(buf, encoded)
		if _, err := queryUnescapeInPlace(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process has used so far, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

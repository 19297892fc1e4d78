//go:build !linux

package nodeengine

import (
	"io"
	"os"
)

const (
	requestPipeSize = 0
	answerPipeSize  = 0
)

// setPipeSize keeps the system's pipe size outside Linux.
func setPipeSize(f *os.File, size int) {}

// writeParts writes head, then body, to the pipe f.
func writeParts(f *os.File, head []byte, body string) error {
	if _, err := f.Write(head); err != nil {
		return err
	}
	_, err := f.WriteString(body)
	return err
}

// newPipeReader reads the pipe f as a file outside Linux.
func newPipeReader(f *os.File) (io.Reader, error) { return f, nil }

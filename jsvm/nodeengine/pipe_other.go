//go:build !linux

package nodeengine

import "os"

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

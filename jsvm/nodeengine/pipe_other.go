//go:build !linux

package nodeengine

import "os"

// setPipeSize keeps the system's pipe size outside Linux.
func setPipeSize(f *os.File) {}

// writeParts writes head, then body, to the pipe f.
func writeParts(f *os.File, head []byte, body string) error {
	if _, err := f.Write(head); err != nil {
		return err
	}
	_, err := f.WriteString(body)
	return err
}

//go:build !linux

package confine

import "errors"

// Mechanism names the confinement in force outside Linux: none.
const Mechanism = "none"

// Available reports that there is no launcher outside Linux.
func Available() error { return errors.New("seccomp is Linux's") }

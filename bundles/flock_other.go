//go:build !unix

package bundles

import (
	"errors"
	"os"
)

// dirLocks tells whether this platform has the directory locks that make
// pruning safe: not here, so a cache size limit is refused.
const dirLocks = false

func tryLockShared(*os.File) (bool, error)    { return true, nil }
func tryLockExclusive(*os.File) (bool, error) { return false, errors.ErrUnsupported }

// pidAlive cannot tell here: every holder counts as alive.
func pidAlive(int) bool { return true }

//go:build unix

package bundles

import (
	"errors"
	"os"
	"syscall"
)

// dirLocks tells whether this platform has the directory locks that make
// pruning safe (flock(2)).
const dirLocks = true

// tryLockShared takes a shared flock on f without waiting; false when an
// exclusive lock is held.
func tryLockShared(f *os.File) (bool, error) { return tryFlock(f, syscall.LOCK_SH) }

// tryLockExclusive takes an exclusive flock on f without waiting; false
// when any lock is held.
func tryLockExclusive(f *os.File) (bool, error) { return tryFlock(f, syscall.LOCK_EX) }

func tryFlock(f *os.File, how int) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		default:
			return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

// pidAlive reports whether process pid exists on this host (one of another
// user counts: signalling it is refused, not unknown).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

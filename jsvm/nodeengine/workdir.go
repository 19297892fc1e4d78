package nodeengine

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// workDirPrefix names the engines' directories in the temporary directory:
// each holds the executor its processes run and is their working directory.
const workDirPrefix = "gorender-node-"

// staleAfter is how old an unlocked work directory must be before a start
// removes it: a new one is locked right after it is created, so this only
// keeps a start from racing another gorender's.
const staleAfter = time.Minute

// workDir is an engine's directory, locked (flock) while the engine runs.
// A gorender killed without Close (SIGKILL, the OOM killer) cannot remove
// its own; the kernel drops its lock, and the next start removes it.
type workDir struct {
	path string
	lock *os.File
}

// newWorkDir removes the work directories no live engine holds, then
// creates and locks this engine's.
func newWorkDir(log *slog.Logger) (*workDir, error) {
	removeStaleWorkDirs(os.TempDir(), log)
	path, err := os.MkdirTemp("", workDirPrefix)
	if err != nil {
		return nil, err
	}
	lock, err := os.Open(path)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != nil {
			lock.Close()
		}
	}
	if err != nil {
		os.RemoveAll(path)
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &workDir{path: path, lock: lock}, nil
}

// remove deletes the directory, then lets go of its lock.
func (w *workDir) remove() {
	os.RemoveAll(w.path)
	w.lock.Close()
}

// removeStaleWorkDirs removes the work directories in tmp that are older
// than staleAfter and whose lock nobody holds.
func removeStaleWorkDirs(tmp string, log *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, workDirPrefix+"*"))
	removed := 0
	for _, dir := range dirs {
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() || time.Since(info.ModTime()) < staleAfter {
			continue
		}
		f, err := os.Open(dir)
		if err != nil {
			continue // another user's, or gone
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && os.RemoveAll(dir) == nil {
			removed++
		}
		f.Close()
	}
	if removed > 0 {
		log.Info("removed node engine directories left by gorender processes that did not stop", "count", removed, "dir", tmp)
	}
}

package nodeengine

import (
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStaleWorkDirs: a start removes the work directories nobody holds that
// are older than staleAfter (a gorender killed without Close left them) and
// keeps a held one, a new one and what is not a directory.
func TestStaleWorkDirs(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-2 * staleAfter)
	mk := func(name string, age time.Time) string {
		dir := filepath.Join(tmp, workDirPrefix+name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "executor.js"), []byte("x"), 0o400); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, age, age); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stale := mk("stale", old)
	held := mk("held", old)
	fresh := mk("fresh", time.Now())
	file := filepath.Join(tmp, workDirPrefix+"file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lock, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	removeStaleWorkDirs(tmp, slog.New(slog.DiscardHandler))
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale directory is left: %v", err)
	}
	for _, kept := range []string{held, fresh, file} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s: %v, want it kept", filepath.Base(kept), err)
		}
	}
}

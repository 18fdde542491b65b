package testlock

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestExcludesOtherProcesses: while this process holds the lock, another
// process (this test binary, re-run as a helper) cannot take it; once
// released, it can.
func TestExcludesOtherProcesses(t *testing.T) {
	if os.Getenv("KGCTX_TESTLOCK_CHILD") == "1" {
		Cluster(t)
		return
	}
	release, err := Hold()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestExcludesOtherProcesses$")
	cmd.Env = append(os.Environ(), "KGCTX_TESTLOCK_CHILD=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		release()
		t.Fatalf("the child took the lock while this process held it (exit %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("the child failed once the lock was free: %v", err)
	}
}

// TestCountedInProcess: two holders in one process share the lock, and
// the file lock is let go only when both are done.
func TestCountedInProcess(t *testing.T) {
	r1, err := Hold()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Hold()
	if err != nil {
		t.Fatal(err)
	}
	r1()
	r1() // idempotent
	if held != 1 || file == nil {
		t.Fatalf("after one release: held %d, file %v", held, file)
	}
	r2()
	if held != 0 || file != nil {
		t.Fatalf("after both: held %d, file %v", held, file)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), lockName)); err != nil {
		t.Fatal(err)
	}
}

package testlock

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	mu   sync.Mutex
	held int      // tests of this process holding the lock
	file *os.File // open while held > 0
)

// lockName is the lock file's name in os.TempDir().
const lockName = "kgctx-cluster-tests.lock"

// Cluster blocks until no other test process of this machine runs cluster
// tests, then holds the lock until t and every other holder in this
// process have finished.
func Cluster(t testing.TB) {
	t.Helper()
	if err := acquire(); err != nil {
		t.Fatalf("testlock: %v", err)
	}
	t.Cleanup(release)
}

// Hold takes the lock for a whole test binary (from TestMain); the
// returned function releases it.
func Hold() (release func(), err error) {
	if err := acquire(); err != nil {
		return nil, err
	}
	return releaseOnce(), nil
}

func releaseOnce() func() {
	var once sync.Once
	return func() { once.Do(release) }
}

func acquire() error {
	mu.Lock()
	defer mu.Unlock()
	if held == 0 {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), lockName), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return err
		}
		file = f
	}
	held++
	return nil
}

func release() {
	mu.Lock()
	defer mu.Unlock()
	held--
	if held == 0 {
		unlockFile(file)
		file.Close()
		file = nil
	}
}

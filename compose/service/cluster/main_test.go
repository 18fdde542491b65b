package cluster

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/kgctx/kgctx/internal/testlock"
)

// TestMain holds the machine's cluster-test lock (package testlock) while
// the package's tests run, unless -short skips its clusters: elections on
// a loaded machine time out when another package's clusters run beside
// them.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	release, err := testlock.Hold()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlock:", err)
		os.Exit(1)
	}
	code := m.Run()
	release()
	os.Exit(code)
}

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/bench"
	"github.com/kgctx/kgctx/internal/testlock"
)

// upgradeFrom are the releases a rolling upgrade to this build is tested
// from, by commit: the previous release, and the last release before log
// versions (its nodes check a write's MAC without the version header, so
// the upgraded nodes must write its format while it lives). Another list
// of commits, or of binaries, in $KGCTX_UPGRADE_FROM (comma-separated).
var upgradeFrom = []string{
	"8a8ac2b81734acda3a2af075fbd3277651604817", // the previous release
	"3aea3ff00d330f8b6f176aea20cc56c45c94f1c1", // the last release before log versions
}

// TestRollingUpgrade runs a cluster of three nodes of an older release,
// upgrades them to this build one at a time while writers import through
// every node (retrying with their Idempotency-Key when a node is down),
// and checks that every node ends with the same store, every
// acknowledged write in it. The older release is built from the
// repository's history; without git or the commit (a shallow clone) the
// test skips.
func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds older releases and runs clusters of three; skipped with -short")
	}
	froms := upgradeFrom
	if env := os.Getenv("KGCTX_UPGRADE_FROM"); env != "" {
		froms = strings.Split(env, ",")
	}
	for _, from := range froms {
		name := from
		if len(name) > 12 && !strings.Contains(name, string(filepath.Separator)) {
			name = name[:12]
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			old := from
			if !strings.Contains(from, string(filepath.Separator)) {
				old = buildRelease(t, from)
			}
			testlock.Cluster(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			var progress strings.Builder
			rep, err := bench.RunUpgrade(ctx, bench.UpgradeConfig{From: old, To: binary, Progress: &progress})
			if err != nil {
				t.Fatalf("rolling upgrade from %s: %v\n%s", from, err, progress.String())
			}
			t.Logf("%s", progress.String())
			if !rep.Identical() {
				t.Fatalf("after the upgrade from %s: %d acknowledged triplets missing, nodes differing from n1: %v", from, rep.Missing, rep.Differ)
			}
			if rep.GaveUp > 0 || rep.Triplets == 0 {
				t.Fatalf("%d batches never acknowledged, %d triplets acknowledged: want every batch acknowledged (retried with its key)", rep.GaveUp, rep.Triplets)
			}
			for _, st := range rep.Steps {
				if st.Acked == 0 {
					t.Errorf("no write acknowledged while %s was upgraded: the other two nodes should take writes", st.Node)
				}
			}
		})
	}
}

// buildRelease builds kgctx at commit from the repository's history into
// a temporary folder, or skips the test when git or the commit is not
// there.
func buildRelease(t *testing.T, commit string) string {
	t.Helper()
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(strings.TrimSpace(string(root)))
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: cannot build an older release")
	}
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s is not in this clone's history (a shallow clone?): cannot build that release", commit)
	}
	dir := t.TempDir()
	tarball := filepath.Join(dir, "src.tar")
	if out, err := exec.Command("git", "-C", repo, "archive", "--format=tar", "-o", tarball, commit).CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v %s", commit, err, out)
	}
	if out, err := exec.Command("tar", "-x", "-C", dir, "-f", tarball).CombinedOutput(); err != nil {
		t.Fatalf("untar %s: %v %s", commit, err, out)
	}
	exe := filepath.Join(dir, "kgctx")
	build := exec.Command("go", "build", "-o", exe, "-ldflags", "-X main.version="+commit[:min(12, len(commit))], "./cmd/kgctx")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", commit, err, out)
	}
	return exe
}

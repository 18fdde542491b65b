package codeindex

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// --since outside a git work tree is one clear line, not git's usage.
func TestSinceOutsideGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	_, err := gitChanged(context.Background(), t.TempDir(), "HEAD~1")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "not in a git work tree") {
		t.Fatalf("%v", err)
	}
}

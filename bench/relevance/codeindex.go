package relevance

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/engine"
)

// The "codeindex" family asks codeloc's questions of the path a user
// takes: each repository's source at the header's snapshot commit (taken
// from a git repository under Config.CodeSrc) indexed by `kgctx index`'s
// extractor at its default options, then kgctx's graph and session blocks
// at 500, 750 and 1,500 tokens, beside BM25 over the same triplets and the
// Aider-style repo map of the same source (repomap.go). Same questions and
// gold as codeloc: functions by name (both graphs name a function pkg.Func
// and a method pkg.Type.Method), files by module-relative path. Scores:
// codeBlockScores (function recall, file recall, precision), reading
// triplet lines and code maps alike.

// CodeIndexBudgets are the budgets the codeindex set asks every system at.
var CodeIndexBudgets = []int{500, 750, 1500}

// ErrNoCodeSrc: the codeindex family needs the repositories' sources.
var ErrNoCodeSrc = errors.New("relevance: the codeindex set needs --code-src DIR with a git repository per codeloc repository (DIR/cobra, DIR/chi, ...)")

func runCodeIndex(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	if cfg.CodeSrc == "" {
		return nil, ErrNoCodeSrc
	}
	cfg.say("codeindex: loading (sources from %s)", cfg.CodeSrc)
	repos, err := loadCodeloc(dir)
	if err != nil {
		return nil, err
	}
	e, err := openEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	tmp, err := os.MkdirTemp("", "kgctx-codeindex-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	r, err := evalCodeRepos(ctx, cfg, e, "codeindex", "codeindex", repos, func(_ int, r *codeRepo) (string, error) {
		return snapshot(ctx, filepath.Join(cfg.CodeSrc, r.Name), r.Snapshot, filepath.Join(tmp, r.Name))
	}, codeindex.Options{}, nil)
	if err != nil {
		return nil, err
	}
	return []SetResult{r}, nil
}

// membersOf maps each file node's name to the names of what it defines or
// contains, in ts (exact names: codeBlockScores compares code names as
// written).
func membersOf(ts []engine.TripletInput) map[string][]string {
	m := map[string][]string{}
	for _, t := range ts {
		if t.SourceType == "file" && (t.Relationship == "defines" || t.Relationship == "contains") {
			m[t.Source] = append(m[t.Source], t.Target)
		}
	}
	return m
}

// snapshot writes the tree of commit rev of the git repository at repo
// (a work tree or a bare repository) into dst and returns dst.
func snapshot(ctx context.Context, repo, rev, dst string) (string, error) {
	gitDir := repo
	if fi, err := os.Stat(filepath.Join(repo, ".git")); err == nil && fi.IsDir() {
		gitDir = filepath.Join(repo, ".git")
	}
	if _, err := os.Stat(gitDir); err != nil {
		return "", fmt.Errorf("%w (%v)", ErrNoCodeSrc, err)
	}
	cmd := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "archive", "--format=tar", rev)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("git archive: %w", err)
	}
	terr := untar(pipe, dst)
	io.Copy(io.Discard, pipe)
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("git archive %s in %s: %v: %s", rev, repo, err, strings.TrimSpace(stderr.String()))
	}
	return dst, terr
}

// untar writes the regular files of a tar stream under dst.
func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(h.Name)
		if !filepath.IsLocal(name) || h.Typeflag != tar.TypeReg {
			continue
		}
		p := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

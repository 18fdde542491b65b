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

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/engine"
)

// The "codeindex" family asks codeloc's questions of two graphs of each
// repository: the shared codeloc graph, and the graph `kgctx index` makes
// of the same snapshot (the repository's source at the header's snapshot
// commit, taken from a git repository under Config.CodeSrc). Same
// questions, same gold functions (by name: both graphs name a function
// pkg.Func and a method pkg.Type.Method) and gold files (module-relative
// paths; a file is reached when its node or a node it defines is in the
// block, each graph's own "defines"/"contains" edges deciding).

// ErrNoCodeSrc: the codeindex family needs the repositories' sources.
var ErrNoCodeSrc = errors.New("relevance: the codeindex set needs --code-src DIR with a git repository per codeloc repository (DIR/cobra, DIR/chi, ...)")

func runCodeIndex(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	if cfg.CodeSrc == "" {
		return nil, ErrNoCodeSrc
	}
	cfg.say("codeindex: loading")
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
	var shared, ours, leanQs []question
	var desc []string
	for _, r := range repos {
		src, err := snapshot(ctx, filepath.Join(cfg.CodeSrc, r.Name), r.Snapshot, filepath.Join(tmp, r.Name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		mod := r.Module
		if mod == "" {
			mod = "github.com/" + r.Repo // a repository from before modules
		}
		ts, err := codeindex.Extract(ctx, src, codeindex.Options{ModulePath: mod})
		if err != nil {
			return nil, fmt.Errorf("index %s at %s: %w", r.Name, r.Snapshot, err)
		}
		lean, err := codeindex.Extract(ctx, src, codeindex.Options{ModulePath: mod, NoTests: true})
		if err != nil {
			return nil, fmt.Errorf("index %s at %s: %w", r.Name, r.Snapshot, err)
		}
		tShared, err := e.load(ctx, r.Name, r.triplets())
		if err != nil {
			return nil, err
		}
		tOurs, err := e.load(ctx, r.Name+"-index", ts)
		if err != nil {
			return nil, err
		}
		tLean, err := e.load(ctx, r.Name+"-index-lean", lean)
		if err != nil {
			return nil, err
		}
		desc = append(desc, fmt.Sprintf("%s: %d shared / %d indexed / %d without tests", r.Name, len(r.Edges), len(ts), len(lean)))
		sharedMembers, ourMembers, leanMembers := r.fileMembers(), membersOf(ts), membersOf(lean)
		for _, cq := range r.Queries {
			q := question{ID: cq.Q, Text: strings.TrimSpace(cq.S + " " + cq.B), Scope: tShared}
			for _, g := range cq.G {
				q.Funcs = append(q.Funcs, r.Nodes[g].N)
			}
			o, n := q, q
			o.Scope, n.Scope = tOurs, tLean
			for _, g := range cq.GF {
				key := engine.NormalizeName(r.Nodes[g].N)
				q.Files = append(q.Files, goldFile{Key: key, Members: sharedMembers[g]})
				o.Files = append(o.Files, goldFile{Key: key, Members: ourMembers[key]})
				n.Files = append(n.Files, goldFile{Key: key, Members: leanMembers[key]})
			}
			shared, ours, leanQs = append(shared, q), append(ours, o), append(leanQs, n)
		}
	}
	idx := pick(len(shared), cfg.Questions, cfg.Seed, 300)
	var out []SetResult
	for _, g := range []struct {
		name string
		qs   []question
	}{{"codeloc, shared graph", shared}, {"codeloc, kgctx index", ours}, {"codeloc, kgctx index --tests=false", leanQs}} {
		s := &set{name: g.name, family: "codeindex", metrics: []string{"function recall", "file recall"},
			data: fmt.Sprintf("%d of %d commits; %s", len(idx), len(shared), strings.Join(desc, "; ")),
			score: func(q *question, b *blockOut) []float64 {
				fn, file := codeScores(q, b)
				return []float64{fn, file}
			}}
		for _, i := range idx {
			s.qs = append(s.qs, g.qs[i])
		}
		systems := []system{e.kgctxGraph(compose.DefaultDepth, GraphBudgets), e.kgctxSession([]int{codeSessionBudget}),
			e.graphBaseline(BaseBM25Triplets, GraphBudgets)}
		r, err := evaluate(ctx, cfg, s, systems)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// membersOf maps each file node's key to the keys of what it defines or
// contains, in ts.
func membersOf(ts []engine.TripletInput) map[string][]string {
	m := map[string][]string{}
	for _, t := range ts {
		if t.SourceType == "file" && (t.Relationship == "defines" || t.Relationship == "contains") {
			k := engine.NormalizeName(t.Source)
			m[k] = append(m[k], engine.NormalizeName(t.Target))
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

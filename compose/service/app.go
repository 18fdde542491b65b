package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/configstore"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/embed"
	"github.com/kgctx/kgctx/internal/resident"
	"github.com/kgctx/kgctx/policy"
	"github.com/kgctx/kgctx/traverse"
)

// Config says where the data lives and how to build the parts.
type Config struct {
	// DataDir holds the Badger store ("store/") and the text index
	// ("text/"). Ignored with InMemory.
	DataDir  string
	InMemory bool
	// SyncWrites fsyncs every commit (survives power loss).
	SyncWrites bool
	// Embedder embeds nodes and queries; nil means the built-in lexical
	// embedder (128 dimensions).
	Embedder embed.Embedder
	// Index holds HNSW and fusion parameters.
	Index index.Options
	// Expand holds the walk's caps (MaxFanout, MaxVisited, HopDecay).
	Expand traverse.Options
	// GraphShare is the share of a session block the graph may take
	// (default 0.4).
	GraphShare float64
	// FeedbackAlpha is the EMA rate of session feedback (default 0.2).
	FeedbackAlpha float64
	// PropagationRate and SimilarErrorScore tune the self-learning graph
	// (defaults 0.3 and 0.75).
	PropagationRate, SimilarErrorScore float64
	Logger                             *slog.Logger
}

// App is the set of parts a kgctx process runs: the store, its seed index,
// the PEP and the composer. cmd, api and bench open one with Open.
type App struct {
	Store *engine.Store
	// Tokens, Delivery and Logs are the store's tokens, leases and inject
	// queue, and injection logs.
	Tokens   *auth.Store
	Delivery *delivery.Store
	Logs     *sessionlog.Store
	Index    *index.Index
	PEP      *policy.PEP
	Composer *compose.Composer
	Settings *compose.Settings
	Injector *compose.Injector
	// Embedder is the embedder in use, counting its calls (metrics).
	Embedder *embed.Counted
	// FeedbackAlpha is the EMA rate of session feedback (default 0.2).
	FeedbackAlpha float64
	Logger        *slog.Logger
	// Writer carries the API's writes (Write); nil applies them here at
	// once. A cluster node sets it before serving.
	Writer Writer
}

// policyConfig is where the active policy text is kept.
const policyKind, policyKey = "policies", "active"

// Open opens (or creates) everything under cfg.DataDir. The caller MUST
// call Close.
func Open(ctx context.Context, cfg Config) (*App, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	emb := cfg.Embedder
	if emb == nil {
		lex, err := embed.NewLexical(embed.LexicalOptions{})
		if err != nil {
			return nil, err
		}
		emb = lex
	}
	counted := embed.NewCounted(emb)
	emb = counted
	storeDir, textDir := filepath.Join(cfg.DataDir, "store"), filepath.Join(cfg.DataDir, "text")
	if cfg.InMemory {
		storeDir, textDir = "", ""
	} else if err := privateDir(cfg.DataDir, log); err != nil {
		return nil, err
	}
	iopts := cfg.Index
	iopts.TextDir = textDir
	ix, err := index.New(emb, iopts)
	if err != nil {
		return nil, err
	}
	// The indexes load their HNSW graphs while the store loads its graph:
	// on a 2-core machine this halves the time to reopen a large store.
	loaded := false
	// Loading reads every table of the store: its pages leave the
	// resident set as the load goes, so that the process never holds the
	// whole store beside its heap (package resident).
	stopDrop := func() {}
	if !cfg.InMemory {
		stopDrop = resident.DropMappedWhile(log, storeDir, time.Second, ".sst")
	}
	st, err := engine.Open(storeDir, &engine.Options{InMemory: cfg.InMemory, SyncWrites: cfg.SyncWrites,
		Vectorizer: index.NewVectorizer(emb), Logger: log,
		WhileLoading: func(st *engine.Store) error {
			if err := ix.Load(st); err != nil {
				return err
			}
			loaded = true
			return nil
		}})
	stopDrop()
	if err != nil {
		if loaded {
			ix.Close()
		}
		return nil, err
	}
	if err := ix.Attach(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	fail := func(err error) (*App, error) {
		ix.Close()
		st.Close()
		return nil, err
	}
	tokens, err := auth.New(st)
	if err != nil {
		return fail(err)
	}
	dl, err := delivery.New(st)
	if err != nil {
		return fail(err)
	}
	logs, err := sessionlog.New(st)
	if err != nil {
		return fail(err)
	}
	text := policy.DefaultPolicies
	if b, err := configstore.New(st).Get(policyKind, policyKey); err == nil {
		text = string(b)
	} else if !errors.Is(err, engine.ErrNotFound) {
		return fail(err)
	}
	pep, err := policy.New(text)
	if err != nil {
		return fail(fmt.Errorf("stored policies no longer valid: %w", err))
	}
	settings := compose.NewSettings(st)
	alpha := cfg.FeedbackAlpha
	if alpha <= 0 || alpha > 1 {
		alpha = 0.2
	}
	c := &compose.Composer{Store: st, Logs: logs, Delivery: dl, Index: ix, PEP: pep, Expand: cfg.Expand, Settings: settings, GraphShare: cfg.GraphShare,
		PropagationRate: cfg.PropagationRate, SimilarErrorScore: cfg.SimilarErrorScore, Logger: log}
	a := &App{Store: st, Tokens: tokens, Delivery: dl, Logs: logs, Index: ix, PEP: pep, Logger: log, Settings: settings, FeedbackAlpha: alpha, Composer: c,
		Injector: compose.NewInjector(c), Embedder: counted}
	c.Writes = sessionWrites{a}
	if !cfg.InMemory {
		// Loading read every table of the store: the pages stay resident
		// while mapped, though serving reads few of them again (package
		// resident). A failure costs memory only.
		if n, err := resident.DropMapped(storeDir, ".sst"); err != nil {
			log.Warn("could not release the store's mapped table pages", "err", err)
		} else {
			log.Debug("released the store's mapped table pages", "mappedMiB", n>>20)
		}
	}
	// A large store is a large live heap: bound the collector's headroom
	// beside it (package resident; GOGC, when set, wins).
	resident.TuneGC(context.Background(), log, 10*time.Second)
	return a, nil
}

// sessionWrites makes the composer's and the injector's session writes
// Writes of the App (through its Writer).
type sessionWrites struct{ a *App }

func (w sessionWrites) PutInjectionLog(ctx context.Context, l sessionlog.InjectionLog) (string, error) {
	res, err := w.a.Write(ctx, Write{Kind: WriteInjectionLog, Org: l.OrgID, Project: l.ProjectID, Log: &l})
	if err != nil || len(res.IDs) == 0 {
		return "", err
	}
	return res.IDs[0], nil
}

func (w sessionWrites) Enqueue(ctx context.Context, in delivery.Inject) (delivery.Inject, bool, error) {
	res, err := w.a.Write(ctx, Write{Kind: WriteEnqueue, Org: in.OrgID, Inject: NewInjectEntry(in)})
	if err != nil || res.Inject == nil {
		return in, res.Duplicate, err
	}
	return *res.Inject, res.Duplicate, nil
}

// SetPolicies validates text, makes it durable, then puts it in force. On
// any error the old set stays in force (and stored).
func (a *App) SetPolicies(text string) error {
	if _, err := policy.New(text); err != nil {
		return err
	}
	if err := configstore.New(a.Store).Put(policyKind, policyKey, []byte(text)); err != nil {
		return err
	}
	return a.PEP.Replace(text)
}

// Close lets the indexes catch up with every write, then closes them and
// the store.
func (a *App) Close() error {
	err := a.Store.Sync(context.Background())
	return errors.Join(err, a.Index.Close(), a.Store.Close())
}

// CloseQuick closes without letting the indexes catch up (engine's
// Store.Abandon): what they have not applied is replayed from the store's
// change log at the next open. For a command asked to stop (Ctrl-C).
func (a *App) CloseQuick() error {
	a.Store.Abandon()
	return errors.Join(a.Index.Close(), a.Store.Close())
}

// privateDir makes the data directory (mode 0700, with its missing
// parents) or, when it exists, takes group's and others' permissions from
// it: it holds every org's data and the token hashes, in files the store
// and the text index create with the umask's modes, and a directory only
// its owner may enter keeps them from the machine's other users.
func privateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("the data directory %s is not a directory", dir)
	}
	if p := fi.Mode().Perm(); p&0o077 != 0 {
		if err := os.Chmod(dir, p&^0o077); err != nil {
			return fmt.Errorf("the data directory %s may be read by group or others (mode %04o) and cannot be made private: %w; chmod 700 it", dir, p, err)
		}
		log.Warn("the data directory could be read by group or others: made private", "dir", dir, "was", fmt.Sprintf("%04o", p), "now", fmt.Sprintf("%04o", p&^0o077))
	}
	return nil
}

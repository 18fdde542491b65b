package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Options configure a Store. The zero value (or nil) means defaults.
type Options struct {
	// InMemory keeps everything in memory (tests); dir is ignored.
	InMemory bool
	// SyncWrites fsyncs every commit, surviving power loss as well as
	// kill -9 (which Badger's mmap'd writes survive anyway).
	SyncWrites bool
	// Limits bound the fields and batches of a write.
	Limits Limits
	// Vectorizer embeds nodes imported without a vector. Its dimension
	// becomes the store's on creation and must match it on reopen.
	Vectorizer Vectorizer
	// Dim is the vector dimension when no Vectorizer is set (0: vectors
	// are refused).
	Dim int
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// MemTableSize is Badger's memtable size in bytes (default 64 MiB).
	MemTableSize int64
	// BlockCacheSize is Badger's block cache in bytes (default 0: tables
	// are uncompressed and read through mmap).
	BlockCacheSize int64
	// WhileLoading, when set, runs on its own goroutine while Open loads
	// the in-memory graph, as soon as the store's metadata is read. It may
	// only use Dim, GetAux, EachAux, EachVector and EachObsVector: indexes
	// load their own state from there in parallel with the graph. Open
	// waits for it and fails if it fails.
	WhileLoading func(*Store) error
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	if o.Dim < 0 {
		return fmt.Errorf("engine: options: negative Dim %d", o.Dim)
	}
	if o.Vectorizer != nil && o.Dim != 0 && o.Vectorizer.Dim() != o.Dim {
		return fmt.Errorf("engine: options: Dim %d differs from the vectorizer's %d", o.Dim, o.Vectorizer.Dim())
	}
	if o.MemTableSize < 0 || o.BlockCacheSize < 0 {
		return errors.New("engine: options: negative cache size")
	}
	return nil
}

func (o *Options) dim() int {
	if o.Vectorizer != nil {
		return o.Vectorizer.Dim()
	}
	return o.Dim
}

// NodeDoc is the indexable state of a node: what text and vector indexes
// hold for it.
type NodeDoc struct {
	Dense       uint32
	ID          string
	OrgID       string
	ProjectID   string
	Name        string
	Aliases     []string
	Type        string
	Description string
	// Vector is the node's new vector; nil means the vector did not change
	// (only the text did). Unit length is not guaranteed.
	Vector []float32
}

// Vectorizer computes vectors for nodes that arrive without one. An
// import calls it once per chunk (at most a few thousand nodes) without
// the store's writer lock: it may be slow, and should honour ctx (the
// request's deadline) and batch.
type Vectorizer interface {
	// Name identifies the embedding model; it is stored with the data.
	Name() string
	Dim() int
	// Vectorize returns one vector per doc, in order.
	Vectorize(ctx context.Context, docs []*NodeDoc) ([][]float32, error)
	// EmbedTexts returns one vector per text (observation contents).
	EmbedTexts(ctx context.Context, texts []string) ([][]float32, error)
}

// ChangeSet lists the nodes and observations a committed batch created,
// changed or deleted. Seq increases with every batch that changes them.
type ChangeSet struct {
	Seq     uint64
	Upserts []*NodeDoc
	Deletes []uint32
	// ObsUpserts are observations created, or whose content or metadata
	// an update replaced (an upsert replaces the entries of its id; a nil
	// Vector keeps the indexed one); ObsDeletes deleted ones.
	ObsUpserts []*ObsDoc
	ObsDeletes []uint32
}

// Indexer is a derived index kept in step with the store (text, vector).
// Apply is called after each batch commits, in Seq order, by the store's
// apply queue (one goroutine, never two Applies at once, without the
// writer lock: the next batch may commit meanwhile); it must be
// idempotent, because after a crash the store replays every change set
// above the indexer's Watermark.
type Indexer interface {
	Name() string
	Apply(ctx context.Context, cs *ChangeSet) error
	// Watermark is the highest Seq whose effects are durable in the index.
	Watermark() uint64
}

// Checker is implemented by indexers whose invariants Store.Check verifies too.
type Checker interface {
	Check() error
}

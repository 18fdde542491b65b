package text

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// Doc is one graph node as seen by the full-text index.
type Doc struct {
	// ID is the engine's dense node id; it is the bleve document id (as 4
	// big-endian bytes), so upserting the same ID replaces the document.
	ID uint32
	// Org and Project are the tenant. Org must be non-empty; Project may be
	// empty (an org-level node, found only by org-wide searches). Neither may
	// contain NUL.
	Org, Project string
	// Name is split into identifier parts (see SplitName) and indexed with
	// the concatenation of its parts.
	Name string
	// Aliases are other surface names of the same entity, analysed like Name
	// in a field of their own.
	Aliases []string
	// Type is the node type ("function", "File", "/people/person"), analysed
	// like Name.
	Type string
	// Description is free text, analysed with the English TextAnalyzer.
	Description string
}

// DefaultBatchSize is the number of operations per bleve batch when
// Options.BatchSize is zero. Each bleve batch becomes one segment and one
// fsync'd persistence round, so bigger is faster; 8192 keeps the memory of
// an in-flight segment to a few MB for typical node documents while a 15k
// node upsert still needs only two rounds.
const DefaultBatchSize = 8192

// MaxBatchSize bounds Options.BatchSize: a bleve batch is built fully in
// memory before it is written.
const MaxBatchSize = 1 << 20

// Options configures Open. The zero value is a valid in-memory index.
type Options struct {
	// Path is the directory of the on-disk index, created if it does not
	// exist. "" means an in-memory index (lost on Close; for tests).
	Path string
	// BatchSize is the maximum number of operations (upserted docs plus
	// deleted ids) written per bleve batch; 0 means DefaultBatchSize.
	BatchSize int
	// MaxPostings is the posting budget of one search: the most postings
	// (summed document frequencies of the searched field terms) a search
	// scores; the most common query terms are left out to stay within it
	// (see the package documentation, "Bounded query cost"). 0 means
	// DefaultMaxPostings; a negative value means no budget (every query
	// term is scored, at a cost that grows with the index).
	MaxPostings int
}

// Validate reports whether the options are usable. It wraps
// ErrInvalidOptions.
func (o Options) Validate() error {
	if o.BatchSize < 0 || o.BatchSize > MaxBatchSize {
		return fmt.Errorf("%w: BatchSize %d not in [0, %d]", ErrInvalidOptions, o.BatchSize, MaxBatchSize)
	}
	if o.Path != "" && strings.TrimSpace(o.Path) == "" {
		return fmt.Errorf("%w: Path is blank", ErrInvalidOptions)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxPostings == 0 {
		o.MaxPostings = DefaultMaxPostings
	} else if o.MaxPostings < 0 {
		o.MaxPostings = -1
	}
	return o
}

// Field names in the bleve documents and mapping.
const (
	fieldName    = "name"
	fieldAliases = "aliases"
	fieldType    = "type"
	fieldDesc    = "description"
	fieldOrg     = "org"   // keyword: Org, for org-wide filters
	fieldScope   = "scope" // keyword: Org + "\x00" + Project
)

// schemaVersion identifies the mapping and analyzers. Bump it whenever an
// analyzer's output or the field layout changes: an index written with
// other rules would silently stop matching queries analysed with the new
// ones, so Open refuses it with ErrSchemaMismatch instead (the index
// package then rebuilds it from the store). History: 1, bleve's stop_en
// and Porter filters; 2, package words' stop list and stemmer.
const schemaVersion = "kgctx-text-2"

// Internal (bleve SetInternal) key space. Caller meta keys are prefixed so
// they can never collide with our schema key or with bleve's own internal
// keys.
const (
	schemaKey  = "kgctx/text/schema"
	metaPrefix = "kgctx/meta/"
)

// fieldOpts: index only. No stored values (hits only need the id, which
// bleve stores anyway), no term vectors (no phrase queries or highlighting)
// and no doc values (no sorting or faceting on fields): each of those would
// cost indexing time and disk for nothing.
const fieldOpts = index.IndexField

// Index is a BM25 full-text index over graph nodes, partitioned by tenant.
// See the package documentation for the concurrency contract.
type Index struct {
	// mu guards closed against Close: every operation holds it for reading
	// for its whole duration, Close takes it for writing, so Close waits for
	// in-flight operations and later calls fail with ErrClosed. bleve itself
	// is safe for concurrent searches and batches.
	mu     sync.RWMutex
	closed bool

	bi          bleve.Index
	nameAn      analysis.Analyzer
	textAn      analysis.Analyzer
	batchSize   int
	maxPostings int // -1: no budget
	dfs         dfCache
	ids         idCache
}

// newMapping builds the index mapping. Documents are indexed with
// Batch.IndexAdvanced (fields built directly, bypassing reflection), but
// the mapping still matters: it selects BM25 scoring, and match queries
// look up the analyzer of a field in it.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = TextAnalyzer
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false

	textField := func(analyzer string) *mapping.FieldMapping {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = analyzer
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = false
		return fm
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldName, textField(NameAnalyzer))
	dm.AddFieldMappingsAt(fieldAliases, textField(NameAnalyzer))
	dm.AddFieldMappingsAt(fieldType, textField(NameAnalyzer))
	dm.AddFieldMappingsAt(fieldDesc, textField(TextAnalyzer))
	dm.AddFieldMappingsAt(fieldOrg, textField("keyword"))
	dm.AddFieldMappingsAt(fieldScope, textField("keyword"))
	im.DefaultMapping = dm
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("text: mapping: %w", err)
	}
	return im, nil
}

// Open creates the index, or reopens the one at opts.Path with all its
// documents and meta keys.
func Open(opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	m, err := newMapping()
	if err != nil {
		return nil, err
	}

	var bi bleve.Index
	created := false
	if opts.Path == "" {
		// Not bleve.NewMemOnly: that builds an upsidedown index, which has no
		// BM25 support (it silently scores with TF-IDF). scorch with an empty
		// path is in-memory.
		bi, err = bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
		created = true
	} else {
		bi, err = bleve.OpenUsing(opts.Path, nil)
		if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing) {
			bi, err = bleve.NewUsing(opts.Path, m, scorch.Name, scorch.Name, nil)
			if err == nil {
				err = syncIndexMeta(opts.Path)
				if err != nil {
					_ = bi.Close()
				}
			}
			created = true
		}
	}
	if err != nil {
		return nil, fmt.Errorf("text: open %q: %w", opts.Path, err)
	}
	ix := &Index{bi: bi, batchSize: opts.BatchSize, maxPostings: opts.MaxPostings}
	if err := ix.initSchema(created); err != nil {
		_ = bi.Close()
		return nil, err
	}
	// Take the analyzers from the index's own mapping (the persisted one on
	// reopen) so documents are analysed exactly like queries are.
	im := bi.Mapping()
	ix.nameAn = im.AnalyzerNamed(NameAnalyzer)
	ix.textAn = im.AnalyzerNamed(TextAnalyzer)
	if ix.nameAn == nil || ix.textAn == nil {
		_ = bi.Close()
		return nil, fmt.Errorf("%w: analyzers %s/%s unavailable", ErrSchemaMismatch, NameAnalyzer, TextAnalyzer)
	}
	return ix, nil
}

// initSchema stamps a new index with schemaVersion, or checks the stamp and
// the scoring model of a reopened one.
func (ix *Index) initSchema(created bool) error {
	got, err := ix.bi.GetInternal([]byte(schemaKey))
	if err != nil {
		return fmt.Errorf("text: read schema: %w", err)
	}
	if got == nil && !created {
		// A crash between creating the index and stamping it leaves an empty
		// unstamped index; anything else unstamped is not ours.
		n, err := ix.bi.DocCount()
		if err != nil {
			return fmt.Errorf("text: read schema: %w", err)
		}
		created = n == 0
	}
	if got == nil && created {
		if err := ix.bi.SetInternal([]byte(schemaKey), []byte(schemaVersion)); err != nil {
			return fmt.Errorf("text: write schema: %w", err)
		}
		return nil
	}
	if string(got) != schemaVersion {
		return fmt.Errorf("%w: index has %q, package expects %q", ErrSchemaMismatch, got, schemaVersion)
	}
	if im, ok := ix.bi.Mapping().(*mapping.IndexMappingImpl); !ok || im.ScoringModel != index.BM25Scoring {
		return fmt.Errorf("%w: index does not score with BM25", ErrSchemaMismatch)
	}
	return nil
}

// syncIndexMeta fsyncs index_meta.json and its directory: bleve writes that
// file without fsync when creating an index, and a crash could otherwise
// leave an index whose segments are durable but whose meta file is empty.
func syncIndexMeta(dir string) error {
	for _, p := range []string{filepath.Join(dir, "index_meta.json"), dir} {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("text: sync %s: %w", p, err)
		}
		err = f.Sync()
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("text: sync %s: %w", p, err)
		}
	}
	return nil
}

// Close flushes nothing (every write is already durable when it returns),
// waits for in-flight operations and releases the index. Later calls,
// including a second Close, return ErrClosed.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	ix.closed = true
	if err := ix.bi.Close(); err != nil {
		return fmt.Errorf("text: close: %w", err)
	}
	return nil
}

// Upsert indexes docs, replacing any document with the same ID. Docs are
// written in bleve batches of at most BatchSize operations; each batch is
// durable (fsync'd) before the next starts, and all are durable when Upsert
// returns nil. Upsert is atomic per batch, not across batches: after a
// crash a prefix of the batches may be visible (replaying the same Upsert
// is idempotent). Within docs, the last Doc with a given ID wins.
func (ix *Index) Upsert(docs []Doc) error {
	return ix.write(docs, nil, "", nil, false)
}

// Delete removes the documents with the given ids; unknown ids are ignored.
// Durability and batching are as for Upsert.
func (ix *Index) Delete(ids []uint32) error {
	return ix.write(nil, ids, "", nil, false)
}

// UpsertWithMeta upserts docs, deletes ids and sets the meta key to val,
// with the meta write in the same bleve batch as the last documents: when
// the meta value (a replay watermark) is visible after a crash, so is every
// document change made before it. Deletions are applied after upserts, so
// an id both upserted and deleted ends up deleted.
func (ix *Index) UpsertWithMeta(docs []Doc, deletes []uint32, key string, val []byte) error {
	if key == "" {
		return ErrInvalidMetaKey
	}
	return ix.write(docs, deletes, key, val, true)
}

func (ix *Index) write(docs []Doc, deletes []uint32, key string, val []byte, withMeta bool) error {
	// Validate everything first so that a bad doc fails the call before any
	// batch is written.
	for i := range docs {
		if err := checkTenant(docs[i].Org, docs[i].Project); err != nil {
			return fmt.Errorf("%w (doc %d, id %d)", err, i, docs[i].ID)
		}
	}
	if len(docs) == 0 && len(deletes) == 0 && !withMeta {
		return nil
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return ErrClosed
	}

	total := len(docs) + len(deletes)
	done := 0
	b := ix.bi.NewBatch()
	ops := 0
	flush := func() error {
		if err := ix.bi.Batch(b); err != nil {
			return fmt.Errorf("text: batch: %w", err)
		}
		b = ix.bi.NewBatch()
		ops = 0
		return nil
	}
	for i := range docs {
		if err := b.IndexAdvanced(ix.document(&docs[i])); err != nil {
			return fmt.Errorf("text: batch: %w", err)
		}
		ops++
		done++
		if ops >= ix.batchSize && done < total {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for _, id := range deletes {
		b.Delete(docID(id))
		ops++
		done++
		if ops >= ix.batchSize && done < total {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if withMeta {
		b.SetInternal(metaKey(key), encodeMeta(val))
	}
	return flush()
}

// document builds the bleve document of d. Values are copied: analyzers
// and token filters may rewrite their input in place, and d's strings must
// stay immutable.
func (ix *Index) document(d *Doc) *document.Document {
	doc := document.NewDocument(docID(d.ID))
	doc.Fields = make([]document.Field, 0, 5+len(d.Aliases))
	if d.Name != "" {
		doc.AddField(document.NewTextFieldCustom(fieldName, nil, []byte(d.Name), fieldOpts, ix.nameAn))
	}
	for _, a := range d.Aliases {
		// Repeated fields of one name add up: one "aliases" field whose
		// length is the total number of alias terms.
		if a != "" {
			doc.AddField(document.NewTextFieldCustom(fieldAliases, nil, []byte(a), fieldOpts, ix.nameAn))
		}
	}
	if d.Type != "" {
		doc.AddField(document.NewTextFieldCustom(fieldType, nil, []byte(d.Type), fieldOpts, ix.nameAn))
	}
	if d.Description != "" {
		doc.AddField(document.NewTextFieldCustom(fieldDesc, nil, []byte(d.Description), fieldOpts, ix.textAn))
	}
	// Keyword fields: a nil analyzer indexes the value as one term.
	doc.AddField(document.NewTextFieldCustom(fieldOrg, nil, []byte(d.Org), fieldOpts, nil))
	doc.AddField(document.NewTextFieldCustom(fieldScope, nil, scopeKey(d.Org, d.Project), fieldOpts, nil))
	return doc
}

func checkTenant(org, project string) error {
	if org == "" {
		return fmt.Errorf("%w: empty org", ErrInvalidTenant)
	}
	if strings.IndexByte(org, 0) >= 0 || strings.IndexByte(project, 0) >= 0 {
		return fmt.Errorf("%w: NUL in org or project", ErrInvalidTenant)
	}
	return nil
}

// scopeKey is the keyword indexed in fieldScope. Org cannot contain NUL, so
// the first NUL unambiguously ends it.
func scopeKey(org, project string) []byte {
	b := make([]byte, 0, len(org)+1+len(project))
	b = append(b, org...)
	b = append(b, 0)
	return append(b, project...)
}

// docID is the bleve document id of a node: its 4 big-endian bytes. Fixed
// width makes parsing trivial (no fmt, no strconv, no allocation) and makes
// bleve's byte order of ids equal to numeric order.
func docID(id uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], id)
	return string(b[:])
}

func parseDocID(s string) (uint32, bool) {
	if len(s) != 4 {
		return 0, false
	}
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3]), true
}

// DocCount returns the number of documents in the index (all tenants).
func (ix *Index) DocCount() (uint64, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return 0, ErrClosed
	}
	n, err := ix.bi.DocCount()
	if err != nil {
		return 0, fmt.Errorf("text: doc count: %w", err)
	}
	return n, nil
}

func metaKey(key string) []byte { return []byte(metaPrefix + key) }

// encodeMeta prefixes a version byte to a meta value. bleve treats a nil
// internal value as a deletion and reads an empty one back as nil after a
// reopen, so the stored value must never be empty. It also copies val:
// scorch keeps the batch's slice in its in-memory snapshot.
func encodeMeta(val []byte) []byte {
	out := make([]byte, 1+len(val))
	out[0] = 1
	copy(out[1:], val)
	return out
}

// SetMeta durably stores val under key (in bleve's internal key space,
// beside the documents). val is copied.
func (ix *Index) SetMeta(key string, val []byte) error {
	if key == "" {
		return ErrInvalidMetaKey
	}
	return ix.write(nil, nil, key, val, true)
}

// GetMeta returns a copy of the value stored under key, or ErrMetaNotFound.
// An empty value set with SetMeta reads back as an empty, non-nil slice.
func (ix *Index) GetMeta(key string) ([]byte, error) {
	if key == "" {
		return nil, ErrInvalidMetaKey
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	v, err := ix.bi.GetInternal(metaKey(key))
	if err != nil {
		return nil, fmt.Errorf("text: get meta %q: %w", key, err)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrMetaNotFound, key)
	}
	if v[0] != 1 {
		return nil, fmt.Errorf("text: get meta %q: unknown encoding %d", key, v[0])
	}
	return append([]byte{}, v[1:]...), nil
}

// DeleteMeta durably removes key; removing a missing key is not an error.
func (ix *Index) DeleteMeta(key string) error {
	if key == "" {
		return ErrInvalidMetaKey
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return ErrClosed
	}
	if err := ix.bi.DeleteInternal(metaKey(key)); err != nil {
		return fmt.Errorf("text: delete meta %q: %w", key, err)
	}
	return nil
}

package engine

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	badger "github.com/dgraph-io/badger/v4"
	"github.com/kgctx/kgctx/engine/model"
)

// ObservationInput is one observation to store.
type ObservationInput struct {
	Content  string          `json:"content" oas:"required"`
	Metadata ObservationMeta `json:"metadata"`
	// Weight in [0,1]; nil means DefaultWeight.
	Weight *float64 `json:"weight,omitempty"`
	// Vector replaces the built-in embedding of the content.
	Vector []float32 `json:"vector,omitempty"`
}

// Observation limits.
const (
	MaxObservationBytes = 64 << 10
	maxObsPaths         = 256
	maxObsPathBytes     = 4096
	maxObsTags          = 64
	maxObsTagBytes      = 128
	maxNamespaceBytes   = 256
)

// ObsHeadBytes is how much of an observation's content memory keeps.
const ObsHeadBytes = 2048

// headOf cuts content to ObsHeadBytes at a rune boundary (a copy).
func headOf[S string | []byte](content S) (string, bool) {
	if len(content) <= ObsHeadBytes {
		return string(content), false
	}
	n := ObsHeadBytes
	for n > 0 && !utf8.RuneStart(content[n]) {
		n--
	}
	return string(content[:n]), true
}

// ObsDoc is the indexable state of an observation.
type ObsDoc struct {
	Dense     uint32
	ID        string
	OrgID     string
	ProjectID string
	Content   string
	Tags      []string
	Namespace string
	// Vector is the observation's vector (set on creation).
	Vector []float32
}

// ValidateObservation checks one input; the error names the field.
func ValidateObservation(in *ObservationInput, dim int) error {
	c := in.Content
	switch {
	case strings.TrimSpace(c) == "":
		return errors.New("content is empty")
	case len(c) > MaxObservationBytes:
		return fmt.Errorf("content is %d bytes, over the limit of %d", len(c), MaxObservationBytes)
	case !utf8.ValidString(c):
		return errors.New("content is not valid UTF-8")
	}
	m := &in.Metadata
	if len(m.Paths) > maxObsPaths {
		return fmt.Errorf("metadata.paths has %d entries, the limit is %d", len(m.Paths), maxObsPaths)
	}
	for _, p := range m.Paths {
		if p == "" || len(p) > maxObsPathBytes || !utf8.ValidString(p) || model.HasControl(p) {
			return fmt.Errorf("metadata.paths: %q must be 1 to %d bytes of UTF-8 without control characters", p, maxObsPathBytes)
		}
	}
	if len(m.Tags) > maxObsTags {
		return fmt.Errorf("metadata.tags has %d entries, the limit is %d", len(m.Tags), maxObsTags)
	}
	for _, t := range m.Tags {
		if t == "" || len(t) > maxObsTagBytes || !utf8.ValidString(t) || model.HasControl(t) {
			return fmt.Errorf("metadata.tags: %q must be 1 to %d bytes of UTF-8 without control characters", t, maxObsTagBytes)
		}
	}
	if len(m.Namespace) > maxNamespaceBytes || !utf8.ValidString(m.Namespace) || model.HasControl(m.Namespace) {
		return fmt.Errorf("metadata.namespace must be at most %d bytes of UTF-8 without control characters", maxNamespaceBytes)
	}
	if m.SessionID != "" {
		if err := ValidateID(m.SessionID); err != nil {
			return fmt.Errorf("metadata.sessionId: %w", err)
		}
	}
	if m.WorkType != "" {
		if err := ValidateID(m.WorkType); err != nil {
			return fmt.Errorf("metadata.workType: %w", err)
		}
	}
	if in.Weight != nil && (*in.Weight < 0 || *in.Weight > 1 || *in.Weight != *in.Weight) {
		return fmt.Errorf("weight %v is outside [0,1]", *in.Weight)
	}
	return model.CheckVector("vector", in.Vector, dim)
}

type obsRec struct {
	id     string
	tenant uint32
	live   bool
	// head is the content's first ObsHeadBytes (cut at a rune boundary):
	// enough to render an excerpt without reading the record.
	head      string
	truncated bool // head is shorter than the content
	weight    float64
	session   string
	namespace string
	workType  string
	paths     []string
	tags      []string
	created   int64
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns a fresh random id: kind, '_' and 16 lower-case base32
// characters (80 random bits). Observations ("obs"), injection logs ("log")
// and deliveries ("dlv") are named this way.
func NewID(kind string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	return kind + "_" + idEncoding.EncodeToString(b[:])
}

func encodeObs(dst []byte, r *obsRec, content string) []byte {
	e := enc{dst}
	e.u8(recordVersion)
	e.str(r.id)
	e.u32(r.tenant)
	e.str(content)
	e.f64(r.weight)
	e.iv(r.created)
	e.str(r.session)
	e.str(r.namespace)
	e.str(r.workType)
	e.uv(uint64(len(r.paths)))
	for _, p := range r.paths {
		e.str(p)
	}
	e.uv(uint64(len(r.tags)))
	for _, t := range r.tags {
		e.str(t)
	}
	return e.b
}

func decodeObs(b []byte, wantContent bool) (obsRec, string, error) {
	d := dec{b: b}
	var r obsRec
	if v := d.u8(); v != recordVersion {
		return r, "", fmt.Errorf("%w: observation record version %d", ErrCorrupt, v)
	}
	r.id = d.str()
	r.tenant = d.u32()
	cb := d.bytes(int(d.uv()))
	var content string
	if wantContent {
		content = string(cb)
	}
	r.head, r.truncated = headOf(cb)
	r.weight = d.f64()
	r.created = d.iv()
	r.session = d.str()
	r.namespace = d.str()
	r.workType = d.str()
	if n := d.uv(); n > 0 && n <= maxObsPaths {
		r.paths = make([]string, n)
		for i := range r.paths {
			r.paths[i] = d.str()
		}
	}
	if n := d.uv(); n > 0 && n <= maxObsTags {
		r.tags = make([]string, n)
		for i := range r.tags {
			r.tags[i] = d.str()
		}
	}
	if d.err {
		return r, "", fmt.Errorf("%w: truncated observation record", ErrCorrupt)
	}
	return r, content, nil
}

// pobs is an observation staged in a batch.
type pobs struct {
	id      uint32
	rec     obsRec
	content string // set for new observations
	vec     []float32
	// isNew: content (and vec, when set) is written and indexed: a new
	// observation, or one UpdateObservation rewrote. Otherwise only the
	// record changes (a weight), its content read back from the store.
	isNew bool
}

// AddObservations validates and stores observations in tenant t, all or
// nothing (a *ValidationError names the inputs by 1-based position). It
// returns their ids in input order. Like Import, it returns once searches
// see them unless o.NoWait; like Import, it embeds without the writer
// lock, and stores a large batch in chunks (the same ids as in one),
// checking ctx between them and deleting the chunks it stored when it
// fails midway.
func (s *Store) AddObservations(ctx context.Context, t Tenant, in []ObservationInput, o ImportOptions) ([]string, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := ValidateID(t.Org); err != nil {
		return nil, fmt.Errorf("org: %w", err)
	}
	if err := ValidateID(t.Project); err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	verr := &ValidationError{}
	for i := range in {
		if err := ValidateObservation(&in[i], s.dim); err != nil {
			verr.add(i+1, err)
		}
	}
	if len(verr.Lines) > 0 {
		return nil, verr
	}
	if len(in) == 0 {
		return []string{}, nil
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	ids := make([]string, len(in))
	_, maxN := s.chunks.limits()
	if len(in) <= s.chunks.bulkMin() {
		maxN = len(in)
	} else {
		// A large batch is stored in chunks (see Import); observations
		// never merge, so undoing one is deleting what it created.
		if err := s.beginBulk(); err != nil {
			return nil, err
		}
		defer s.endBulk()
	}
	var created []uint32
	var tenants []uint32
	var last uint64
	fail := func(err error) ([]string, error) {
		if len(created) == 0 {
			return nil, err
		}
		if uerr := s.undoObservations(created, tenants); uerr != nil {
			s.log.Error("undoing a failed observation batch failed: the store keeps part of it", "org", t.Org, "project", t.Project, "err", uerr)
			return nil, fmt.Errorf("engine: adding observations failed after %d of %d: %w; undoing them failed: %w", len(created), len(in), err, uerr)
		}
		return nil, fmt.Errorf("engine: adding observations stopped after %d of %d, which were undone: %w", len(created), len(in), err)
	}
	for from := 0; from < len(in); from += maxN {
		chunk := in[from:min(from+maxN, len(in))]
		if len(chunk) < len(in) {
			err := s.checkOpen()
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				return fail(err)
			}
		}
		vecs, err := s.embedObservations(ctx, chunk)
		if err == nil && len(chunk) < len(in) {
			err = s.waitRoom(ctx, len(chunk)) // as Import: embedded while the indexers worked
		}
		if err != nil {
			return fail(err)
		}
		var dense []uint32
		newTenant := -1
		cs, err := s.write(ctx, func(b *batch) error {
			b.ids = o.IDs
			dense, newTenant = dense[:0], -1
			nt := len(b.g.tenants)
			tid := b.tenant(t)
			if len(b.newTenants) > 0 {
				newTenant = nt
			}
			next := 0
			for i := range chunk {
				x := &chunk[i]
				w := DefaultWeight
				if x.Weight != nil {
					w = *x.Weight
				}
				p := &pobs{id: b.s.next.obs, isNew: true, content: x.Content, vec: x.Vector, rec: obsRec{
					id: b.ids.ID("obs"), tenant: tid, weight: w, created: b.now, session: x.Metadata.SessionID,
					namespace: x.Metadata.Namespace, workType: x.Metadata.WorkType,
					paths: append([]string(nil), x.Metadata.Paths...), tags: append([]string(nil), x.Metadata.Tags...)}}
				b.s.next.obs++
				p.rec.head, p.rec.truncated = headOf(x.Content)
				ids[from+i] = p.rec.id
				dense = append(dense, p.id)
				b.obsList = append(b.obsList, p)
				if p.vec == nil && vecs != nil {
					p.vec = vecs[next]
					next++
				}
			}
			return nil
		}, now, true)
		if err != nil {
			return fail(err)
		}
		created = append(created, dense...)
		if newTenant >= 0 {
			tenants = append(tenants, uint32(newTenant))
		}
		if cs != nil {
			last = cs.Seq
		}
	}
	if !o.NoWait && last > 0 {
		// Committed: a cancelled wait does not undo it.
		if err := s.waitApplied(context.WithoutCancel(ctx), last); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// embedObservations embeds the contents of the inputs that came without a
// vector (nil when none did or the store has no Vectorizer). It runs
// before the writer lock is taken: the contents do not depend on the
// store, and an HTTP embedder may take seconds.
func (s *Store) embedObservations(ctx context.Context, in []ObservationInput) ([][]float32, error) {
	var need []string
	for i := range in {
		if in[i].Vector == nil {
			need = append(need, in[i].Content)
		}
	}
	if len(need) == 0 || s.opts.Vectorizer == nil {
		return nil, nil
	}
	vecs, err := s.opts.Vectorizer.EmbedTexts(ctx, need)
	if err != nil {
		return nil, fmt.Errorf("engine: embed %d observations: %w", len(need), err)
	}
	if len(vecs) != len(need) {
		return nil, fmt.Errorf("engine: embedder returned %d vectors for %d observations", len(vecs), len(need))
	}
	return vecs, nil
}

// Observation returns the observation id of tenant t (ErrNotFound if absent
// or another tenant's).
func (s *Store) Observation(t Tenant, id string) (Observation, error) {
	var o Observation
	var dense uint32
	err := s.View(func(v *View) error {
		d, ok := v.g.byObs[id]
		if !ok || v.g.tenants[v.g.obs[d].tenant] != t {
			return ErrNotFound
		}
		dense = d
		o = v.Observation(d)
		return nil
	})
	if err != nil {
		return o, err
	}
	contents, err := s.ObservationContents([]uint32{dense})
	if err != nil {
		return o, err
	}
	if contents[0] == "" {
		return o, ErrNotFound // deleted between the two reads
	}
	o.Content = contents[0]
	return o, nil
}

// ObservationContents reads the content of observations by dense id ("" for
// one that is gone).
func (s *Store) ObservationContents(ids []uint32) ([]string, error) {
	out := make([]string, len(ids))
	err := s.db.View(func(txn *badger.Txn) error {
		for i, id := range ids {
			item, err := txn.Get(key32(pfxObs, id))
			if err == badger.ErrKeyNotFound {
				continue
			} else if err != nil {
				return err
			}
			if err := item.Value(func(v []byte) error {
				_, c, err := decodeObs(v, true)
				out[i] = c
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// DeleteObservation deletes observation id of tenant t, from the store and
// (through the indexers) from every index. ErrNotFound if absent.
func (s *Store) DeleteObservation(ctx context.Context, t Tenant, id string) error {
	return s.deleteWhere(ctx, func(v *View, b *batch) error {
		d, ok := v.g.byObs[id]
		if !ok || v.g.tenants[v.g.obs[d].tenant] != t {
			return ErrNotFound
		}
		b.delObs = append(b.delObs, d)
		return nil
	})
}

// Observation returns observation d's in-memory fields (no content).
func (v *View) Observation(d uint32) Observation {
	r := &v.g.obs[d]
	t := v.g.tenants[r.tenant]
	return Observation{ID: r.id, Dense: d, OrgID: t.Org, ProjectID: t.Project, Weight: r.weight, CreatedAt: unixTime(r.created),
		Metadata: ObservationMeta{Paths: append([]string{}, r.paths...), SessionID: r.session, Namespace: r.namespace,
			Tags: append([]string{}, r.tags...), WorkType: r.workType}}
}

// ObservationCount is the number of live observations.
func (v *View) ObservationCount() int { return v.g.liveObs }

// ObsLive reports whether d is a live observation.
func (v *View) ObsLive(d uint32) bool { return int(d) < len(v.g.obs) && v.g.obs[d].live }

// ObsWeight is observation d's EMA weight.
func (v *View) ObsWeight(d uint32) float64 { return v.g.obs[d].weight }

// ObsID is observation d's external id.
func (v *View) ObsID(d uint32) string { return v.g.obs[d].id }

// ObsTenant is the (org, project) of observation d.
func (v *View) ObsTenant(d uint32) Tenant { return v.g.tenants[v.g.obs[d].tenant] }

// ObsHead is the start of observation d's content (read-only) and whether
// the content goes on beyond it.
func (v *View) ObsHead(d uint32) (string, bool) { return v.g.obs[d].head, v.g.obs[d].truncated }

// ObsSession, ObsNamespace and ObsPaths are observation d's metadata
// (read-only).
func (v *View) ObsSession(d uint32) string   { return v.g.obs[d].session }
func (v *View) ObsNamespace(d uint32) string { return v.g.obs[d].namespace }
func (v *View) ObsPaths(d uint32) []string   { return v.g.obs[d].paths }

// ObsByID resolves an external observation id.
func (v *View) ObsByID(id string) (uint32, bool) {
	d, ok := v.g.byObs[id]
	return d, ok
}

// ObsSessionNext returns the live observation recorded just after
// observation d in its session (same tenant, same non-empty session id,
// whatever other sessions recorded in between); false when d has no
// session or is its session's last.
func (v *View) ObsSessionNext(d uint32) (uint32, bool) {
	if !v.ObsLive(d) || v.g.obs[d].session == "" {
		return 0, false
	}
	o := &v.g.obs[d]
	if b := v.g.sessObs[sessKey{o.tenant, o.session}]; b != nil {
		if next := b.NextValue(d + 1); next >= 0 {
			return uint32(next), true
		}
	}
	return 0, false
}

// ScopeObservations returns the live observations of a project, or of the
// whole org when t.Project is "" (nil if none).
func (v *View) ScopeObservations(t Tenant) *roaring.Bitmap {
	if t.Project == "" {
		return v.g.orgObs[t.Org]
	}
	if id, ok := v.g.tenantIndex[t]; ok && int(id) < len(v.g.projObs) {
		return v.g.projObs[id]
	}
	return nil
}

// obsVector returns a copy of observation id's stored vector.
func (s *Store) obsVector(id uint32) ([]float32, error) {
	b, err := s.get(key32(pfxObsVec, id))
	if err != nil {
		return nil, err
	}
	return decodeVector(nil, b), nil
}

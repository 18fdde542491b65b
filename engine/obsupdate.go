package engine

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// ObservationPatch changes an observation: a nil field is kept as it is.
// Given metadata replaces the whole metadata (no merge).
type ObservationPatch struct {
	Content  *string          `json:"content,omitempty"`
	Metadata *ObservationMeta `json:"metadata,omitempty"`
	// Weight in [0,1]; nil keeps the learnt weight.
	Weight *float64 `json:"weight,omitempty"`
	// Vector replaces the embedding of the new content (only with
	// Content; nil: the store's vectorizer embeds it).
	Vector []float32 `json:"vector,omitempty"`
}

// Validate checks p against the limits of ValidateObservation; the error
// names the field.
func (p *ObservationPatch) Validate(dim int) error {
	if p.Content == nil && p.Metadata == nil && p.Weight == nil {
		return fmt.Errorf("the patch changes nothing: give content, metadata or weight")
	}
	if p.Vector != nil && p.Content == nil {
		return fmt.Errorf("vector without content: a vector embeds new content")
	}
	in := ObservationInput{Content: "unchanged", Weight: p.Weight, Vector: p.Vector}
	if p.Content != nil {
		in.Content = *p.Content
	}
	if p.Metadata != nil {
		in.Metadata = *p.Metadata
	}
	return ValidateObservation(&in, dim)
}

// UpdateObservation changes observation id of tenant t as p says
// (ErrNotFound if absent or another tenant's; ErrInvalidInput, naming the
// field, for an invalid patch). New content is embedded again and, like
// new metadata (tags and namespace are indexed), replaces the
// observation's text and vector index entries: a search finds the new
// words, not the old. The id, the creation time and, unless p gives one,
// the learnt weight are kept. Like AddObservations it returns once
// searches see the change unless o.NoWait; o.Now and o.IDs are unused (an
// update takes no ids and keeps the creation time).
func (s *Store) UpdateObservation(ctx context.Context, t Tenant, id string, p ObservationPatch, o ImportOptions) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := p.Validate(s.dim); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	// Embedding may call an HTTP embedder: before the writer lock.
	vec := p.Vector
	if p.Content != nil && vec == nil && s.opts.Vectorizer != nil {
		vs, err := s.opts.Vectorizer.EmbedTexts(ctx, []string{*p.Content})
		if err != nil {
			return fmt.Errorf("engine: embed the observation: %w", err)
		}
		if len(vs) != 1 {
			return fmt.Errorf("engine: embedder returned %d vectors for 1 observation", len(vs))
		}
		vec = vs[0]
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	_, err := s.write(ctx, func(b *batch) error {
		d, ok := b.g.byObs[id]
		if !ok || b.g.tenants[b.g.obs[d].tenant] != t {
			return fmt.Errorf("%w: observation %q", ErrNotFound, id)
		}
		x := &pobs{id: d, rec: b.g.obs[d]}
		if p.Weight != nil {
			x.rec.weight = *p.Weight
		}
		if m := p.Metadata; m != nil {
			x.rec.session, x.rec.namespace, x.rec.workType = m.SessionID, m.Namespace, m.WorkType
			x.rec.paths, x.rec.tags = slices.Clone(m.Paths), slices.Clone(m.Tags)
		}
		// isNew makes the batch write the content and hand the
		// observation to the indexers (an upsert replaces its entries).
		switch {
		case p.Content != nil:
			x.isNew, x.content, x.vec = true, *p.Content, vec
			x.rec.head, x.rec.truncated = headOf(*p.Content)
		case p.Metadata != nil:
			cs, err := s.ObservationContents([]uint32{d})
			if err != nil {
				return err
			}
			// The vector stays: it embeds the content, which is kept.
			x.isNew, x.content = true, cs[0]
		}
		b.obsList = append(b.obsList, x)
		return nil
	}, now, o.NoWait)
	return err
}

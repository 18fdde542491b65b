package index

import (
	"context"
	"fmt"
	"strings"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/embed"
)

// Vectorizer adapts an embedder to the engine. A node's vector is the
// embedding of its name and type plus DescriptionWeight times the
// embedding of its description, normalised: the name is the node's
// identity and what queries mostly name, and a long description embedded
// together with it would drown it (with the lexical embedder, a two-word
// name in a twelve-word text keeps a sixth of the features).
type Vectorizer struct{ Emb embed.Embedder }

// DescriptionWeight is the share of the description in a node's vector.
const DescriptionWeight = 0.5

// NewVectorizer returns the engine.Vectorizer for emb.
func NewVectorizer(emb embed.Embedder) *Vectorizer { return &Vectorizer{Emb: emb} }

func (v *Vectorizer) Name() string { return v.Emb.Name() }
func (v *Vectorizer) Dim() int     { return v.Emb.Dim() }

// Vectorize embeds the docs in one batch of names and descriptions.
func (v *Vectorizer) Vectorize(ctx context.Context, docs []*engine.NodeDoc) ([][]float32, error) {
	texts := make([]string, 0, len(docs)+len(docs)/2)
	for _, d := range docs {
		texts = append(texts, NodeText(d.Name, d.Type, ""))
	}
	for _, d := range docs {
		if d.Description != "" {
			texts = append(texts, d.Description)
		}
	}
	vecs, err := v.Emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("index: embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	out := vecs[:len(docs)]
	j := len(docs)
	for i, d := range docs {
		if d.Description == "" {
			continue
		}
		name, desc := out[i], vecs[j]
		j++
		for k := range name {
			name[k] += DescriptionWeight * desc[k]
		}
		if !embed.Normalize(name) {
			copy(name, desc)
		}
	}
	return out, nil
}

// EmbedTexts embeds observation contents.
func (v *Vectorizer) EmbedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	return v.Emb.Embed(ctx, texts)
}

// NodeText is the text a node's vector embeds: its name first (the
// embedder splits identifiers), then its type and description.
func NodeText(name, typ, desc string) string {
	var b strings.Builder
	b.Grow(len(name) + len(typ) + len(desc) + 4)
	b.WriteString(name)
	if typ != "" {
		b.WriteString(". ")
		b.WriteString(typ)
	}
	if desc != "" {
		b.WriteString(". ")
		b.WriteString(desc)
	}
	return b.String()
}

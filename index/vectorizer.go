package index

import (
	"context"
	"strings"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/embed"
)

// Vectorizer adapts an embedder to the engine: a node's vector is the
// embedding of its name, type and description.
type Vectorizer struct{ Emb embed.Embedder }

// NewVectorizer returns the engine.Vectorizer for emb.
func NewVectorizer(emb embed.Embedder) *Vectorizer { return &Vectorizer{Emb: emb} }

func (v *Vectorizer) Name() string { return v.Emb.Name() }
func (v *Vectorizer) Dim() int     { return v.Emb.Dim() }

// Vectorize embeds NodeText of each doc in one batch.
func (v *Vectorizer) Vectorize(ctx context.Context, docs []*engine.NodeDoc) ([][]float32, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = NodeText(d.Name, d.Type, d.Description)
	}
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

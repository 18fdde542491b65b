package tripletio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/kgctx/kgctx/engine"
)

// Encoder writes triplets as NDJSON, the export format: one compact object
// per line, optional fields omitted when empty, readable back by a JSONL
// Reader into identical values. An Encoder is not safe for concurrent use.
type Encoder struct {
	enc *json.Encoder
}

// NewEncoder returns an Encoder writing to w. Each Encode is one Write of
// one complete line, so wrap a file or pipe in a bufio.Writer (and flush it)
// when exporting many triplets.
func NewEncoder(w io.Writer) *Encoder {
	enc := json.NewEncoder(w)
	// Names like "a<b" stay readable; NDJSON is not embedded in HTML.
	enc.SetEscapeHTML(false)
	return &Encoder{enc: enc}
}

// Encode writes t as one line. It writes nothing when t cannot be encoded
// (a NaN weight or vector component).
func (e *Encoder) Encode(t *engine.TripletInput) error {
	if t == nil {
		return errors.New("tripletio: encode: nil triplet")
	}
	if err := e.enc.Encode(t); err != nil {
		return fmt.Errorf("tripletio: encode: %w", err)
	}
	return nil
}

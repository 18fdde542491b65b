package engine

import "github.com/kgctx/kgctx/engine/model"

// The store's value types live in engine/model, which holds no storage,
// so that clients (api/client) and the triplet codecs (engine/tripletio)
// use them without linking Badger. Their engine names stay: each is an
// alias, the same type.
type (
	TripletInput    = model.TripletInput
	Provenance      = model.Provenance
	Location        = model.Location
	Tenant          = model.Tenant
	ImportResult    = model.ImportResult
	Stats           = model.Stats
	Observation     = model.Observation
	ObservationMeta = model.ObservationMeta
	Limits          = model.Limits
	Positions       = model.Positions
)

// Limits of a write and of the code fields (model).
const (
	DefaultMaxNameBytes        = model.DefaultMaxNameBytes
	DefaultMaxRelBytes         = model.DefaultMaxRelBytes
	DefaultMaxTypeBytes        = model.DefaultMaxTypeBytes
	DefaultMaxDescriptionBytes = model.DefaultMaxDescriptionBytes
	DefaultMaxBatch            = model.DefaultMaxBatch
	MaxLocationFileBytes       = model.MaxLocationFileBytes
	MaxSignatureBytes          = model.MaxSignatureBytes
)

// ValidateID checks an org, project, agent or session id
// (model.ValidateID).
func ValidateID(id string) error { return model.ValidateID(id) }

// ValidateTriplet trims and checks t in place (model.ValidateTriplet).
func ValidateTriplet(t *TripletInput, lim Limits, dim int) error {
	return model.ValidateTriplet(t, lim, dim)
}

// ParsePositions reads "SHARD:SEQ,..." (model.ParsePositions).
func ParsePositions(text string) (map[string]uint64, error) { return model.ParsePositions(text) }

package engine

import "time"

// Provenance records where a triplet came from. All fields are optional.
type Provenance struct {
	ObservationID string    `json:"observationId,omitempty"`
	SessionID     string    `json:"sessionId,omitempty"`
	Timestamp     time.Time `json:"timestamp,omitzero"`
}

// TripletInput is one triplet as an extractor sends it (API.md "Graph: import").
// Only Source, Relationship and Target are required. It is the wire shape of
// the JSON, NDJSON, TSV and CSV importers and of the export format.
type TripletInput struct {
	Source       string `json:"source" oas:"required"`
	Relationship string `json:"relationship" oas:"required"`
	Target       string `json:"target" oas:"required"`

	SourceType        string `json:"sourceType,omitempty"`
	TargetType        string `json:"targetType,omitempty"`
	SourceDescription string `json:"sourceDescription,omitempty"`
	TargetDescription string `json:"targetDescription,omitempty"`

	// Weight, when set, is the edge weight in [0,1]; nil means "keep the
	// current weight" (0.5 for a new edge).
	Weight *float64 `json:"weight,omitempty"`
	// SourceWeight / TargetWeight, when set, are the endpoints' node
	// weights (an export carries them so that an import restores them).
	SourceWeight *float64    `json:"sourceWeight,omitempty"`
	TargetWeight *float64    `json:"targetWeight,omitempty"`
	Provenance   *Provenance `json:"provenance,omitempty"`

	// SourceVector / TargetVector replace the built-in embedding of that
	// node; their length must equal the store's dimension.
	SourceVector []float32 `json:"sourceVector,omitempty"`
	TargetVector []float32 `json:"targetVector,omitempty"`

	// SourceAliases / TargetAliases are other surface names of the
	// endpoints (e.g. the full IRI of an N-Triples term), kept as aliases.
	SourceAliases []string `json:"sourceAliases,omitempty"`
	TargetAliases []string `json:"targetAliases,omitempty"`

	// SourceProjectID / TargetProjectID place an endpoint in another project
	// of the same org; TargetOrgID places the target in another org
	// (operators only).
	SourceProjectID string `json:"sourceProjectId,omitempty"`
	TargetProjectID string `json:"targetProjectId,omitempty"`
	TargetOrgID     string `json:"targetOrgId,omitempty"`

	// SourceExact / TargetExact mark a name exact: its identity is the
	// name as given, case kept and nothing folded, and it never merges
	// with a folded name (code symbols: Conn.close and Conn.Close are two
	// nodes). Unmarked names keep the folding rule (NormalizeName).
	SourceExact bool `json:"sourceExact,omitempty"`
	TargetExact bool `json:"targetExact,omitempty"`
	// SourceLocation / TargetLocation are where a code symbol lives, and
	// SourceSignature / TargetSignature its one-line signature (at most
	// 256 bytes); an import that omits them keeps the stored ones.
	SourceLocation  *Location `json:"sourceLocation,omitempty"`
	TargetLocation  *Location `json:"targetLocation,omitempty"`
	SourceSignature string    `json:"sourceSignature,omitempty"`
	TargetSignature string    `json:"targetSignature,omitempty"`
}

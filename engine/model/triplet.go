package model

import (
	"fmt"
	"time"
	"unicode/utf8"
)

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

// Location is where a code symbol lives: a file path (as the extractor
// names it; the indexer gives it module-relative with '/') and its first
// and last lines, 1-based and inclusive.
type Location struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	EndLine int    `json:"endLine,omitempty"`
}

// Limits of the code fields (API.md, "Code graphs").
const (
	MaxLocationFileBytes = 1024
	MaxSignatureBytes    = 256
	maxLine              = 1<<31 - 1
)

// checkLocation checks a location of the import contract: a file path of
// 1 to 1,024 bytes of valid UTF-8 without control characters, line >= 1,
// endLine 0 (the line alone) or >= line.
func checkLocation(field string, l *Location) error {
	if l == nil {
		return nil
	}
	switch {
	case l.File == "":
		return fmt.Errorf("%s.file is empty", field)
	case len(l.File) > MaxLocationFileBytes:
		return fmt.Errorf("%s.file is %d bytes, over the limit of %d", field, len(l.File), MaxLocationFileBytes)
	case !utf8.ValidString(l.File):
		return fmt.Errorf("%s.file %w", field, errInvalidUTF8)
	case HasControl(l.File):
		return fmt.Errorf("%s.file contains a control character", field)
	case l.Line < 1 || l.Line > maxLine:
		return fmt.Errorf("%s.line %d is not a line number (1 to %d)", field, l.Line, maxLine)
	case l.EndLine != 0 && (l.EndLine < l.Line || l.EndLine > maxLine):
		return fmt.Errorf("%s.endLine %d is not a line from line %d on", field, l.EndLine, l.Line)
	}
	return nil
}

// checkSignature checks a signature: at most 256 bytes of valid UTF-8 on
// one line, no control characters.
func checkSignature(field, s string) error {
	switch {
	case len(s) > MaxSignatureBytes:
		return fmt.Errorf("%s is %d bytes, over the limit of %d", field, len(s), MaxSignatureBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %w", field, errInvalidUTF8)
	case HasControl(s):
		return fmt.Errorf("%s contains a control character (newline, tab, ...)", field)
	}
	return nil
}

// ImportResult counts what an Import did.
type ImportResult struct {
	Accepted     int    `json:"accepted"`
	NodesCreated int    `json:"nodesCreated"`
	NodesUpdated int    `json:"nodesUpdated"`
	EdgesCreated int    `json:"edgesCreated"`
	EdgesMerged  int    `json:"edgesMerged"`
	Seq          uint64 `json:"-"`
}

// Tenant is the (org, project) a record belongs to. Project "" means the
// whole org where a scope is asked for.
type Tenant struct {
	Org     string `json:"orgId"`
	Project string `json:"projectId"`
}

// Stats summarises a project's graph.
type Stats struct {
	Nodes      int            `json:"nodes"`
	Triplets   int            `json:"triplets"`
	Predicates map[string]int `json:"predicates"`
}

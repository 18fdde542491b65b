package engine

// Code identity, locations and signatures.
//
// An extractor that knows a name exactly (a code indexer: `Conn.close`
// and `Conn.Close` are two methods) marks it exact (TripletInput's
// SourceExact, TargetExact). An exact name's identity is the name as
// given: case kept, nothing folded. It never merges with a folded name,
// even one spelled the same: the two live under disjoint keys (exactKey).
//
// A code node may carry where it lives (Location: a file path and a line
// span) and a one-line signature. Both are kept in memory beside the
// node's record (codeInfo), since a block's code map reads them for every
// symbol it lists; a node without them costs one nil pointer.

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

// codeInfo is the code part of a node record: nil for nodes without a
// location or signature.
type codeInfo struct {
	file          string
	line, endLine uint32
	sig           string
}

func (c *codeInfo) location() (Location, bool) {
	if c == nil || c.file == "" {
		return Location{}, false
	}
	return Location{File: c.file, Line: int(c.line), EndLine: int(c.endLine)}, true
}

func (c *codeInfo) signature() string {
	if c == nil {
		return ""
	}
	return c.sig
}

// NodeLocation is node n's location, when it has one.
func (v *View) NodeLocation(n uint32) (Location, bool) { return v.g.nodes[n].code.location() }

// NodeSignature is node n's one-line signature ("" if none).
func (v *View) NodeSignature(n uint32) string { return v.g.nodes[n].code.signature() }

// NodeExact reports whether node n's name is exact: its identity is the
// name as written, not its folded form.
func (v *View) NodeExact(n uint32) bool { return v.g.nodes[n].exact }

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
func (v *View) NodeExact(n uint32) bool { return v.g.exactW[n>>6]&(1<<(n&63)) != 0 }

// exactPrefix starts the identity key of every exact name. The byte 0xff
// never occurs in UTF-8, and names and folded keys are valid UTF-8, so an
// exact key never equals a folded one: "Conn.Close" marked exact and
// "Conn.Close" unmarked are two nodes.
const exactPrefix = "\xff"

// nameKeyOf is the identity key of name: exactPrefix and the name itself
// when exact, else NormalizeName(name).
func nameKeyOf(name string, exact bool) string {
	if exact {
		return exactPrefix + name
	}
	return NormalizeName(name)
}

// appendNameKey appends nameKeyOf(name, exact) to dst.
func appendNameKey(dst []byte, name string, exact bool) []byte {
	if exact {
		return append(append(dst, exactPrefix...), name...)
	}
	return AppendNormalizedName(dst, name)
}

// mergeCode is old with what an import gives replacing what it names: a
// location, a signature (each kept when the import omits it). It returns
// old itself when nothing changes: records share their codeInfo and never
// modify it.
func mergeCode(old *codeInfo, l *Location, sig string) *codeInfo {
	if l == nil && sig == "" {
		return old
	}
	c := codeInfo{}
	if old != nil {
		c = *old
	}
	if l != nil {
		c.file, c.line, c.endLine = l.File, uint32(l.Line), uint32(max(l.EndLine, l.Line))
	}
	if sig != "" {
		c.sig = sig
	}
	if old != nil && c == *old {
		return old
	}
	return &c
}

package engine

import (
	"fmt"
	"time"
)

const recordVersion = 1

// nodeRecordV2 is the node record of an exact name or a code node: the
// version 1 record followed by flags (nodeExact, nodeCode) and, with
// nodeCode, the location's file, line and end line and the signature.
// Other nodes keep version 1 records, so a store written before exact
// names reads as it did.
const nodeRecordV2 = 2

const (
	nodeExact = 1 << iota
	nodeCode
)

// encodeNode appends the stored form of a node: version, uuid, tenant, name,
// type, description, aliases, weight, created, updated; then, in a version
// 2 record, flags and code fields.
func encodeNode(dst []byte, r *nodeRec, desc string) []byte {
	e := enc{dst}
	v2 := r.exact || r.code != nil
	if v2 {
		e.u8(nodeRecordV2)
	} else {
		e.u8(recordVersion)
	}
	e.raw(r.uuid[:])
	e.u32(r.tenant)
	e.str(r.name)
	e.str(r.typ)
	e.str(desc)
	e.uv(uint64(len(r.aliases)))
	for _, a := range r.aliases {
		e.str(a)
	}
	e.f64(r.weight)
	e.iv(r.created)
	e.iv(r.updated)
	if v2 {
		var flags uint8
		if r.exact {
			flags |= nodeExact
		}
		if r.code != nil {
			flags |= nodeCode
		}
		e.u8(flags)
		if c := r.code; c != nil {
			e.str(c.file)
			e.uv(uint64(c.line))
			e.uv(uint64(c.endLine))
			e.str(c.sig)
		}
	}
	return e.b
}

// decodeNode reads a node record; the description is returned separately
// (and only materialised when wantDesc) because memory keeps only its hash.
func decodeNode(b []byte, wantDesc bool) (nodeRec, string, error) {
	d := dec{b: b}
	var r nodeRec
	v := d.u8()
	if v != recordVersion && v != nodeRecordV2 {
		return r, "", fmt.Errorf("%w: node record version %d", ErrCorrupt, v)
	}
	copy(r.uuid[:], d.bytes(16))
	r.tenant = d.u32()
	r.name = d.str()
	r.typ = d.str()
	descB := d.bytes(int(d.uv()))
	var desc string
	if wantDesc {
		desc = string(descB)
		r.descHash = descHash(desc)
	} else {
		r.descHash = descHash(string(descB)) // maphash.String does not retain it
	}
	if n := d.uv(); n > 0 && n < 1<<16 {
		r.aliases = make([]string, n)
		for i := range r.aliases {
			r.aliases[i] = d.str()
		}
	}
	r.weight = d.f64()
	r.created = d.iv()
	r.updated = d.iv()
	if v == nodeRecordV2 {
		flags := d.u8()
		r.exact = flags&nodeExact != 0
		if flags&nodeCode != 0 {
			c := &codeInfo{file: d.str()}
			c.line, c.endLine = uint32(d.uv()), uint32(d.uv())
			c.sig = d.str()
			r.code = c
		}
	}
	if d.err {
		return r, "", fmt.Errorf("%w: truncated node record", ErrCorrupt)
	}
	r.norm = nameKeyOf(r.name, r.exact)
	return r, desc, nil
}

// edgeMeta is the part of an edge that lives only in Badger.
type edgeMeta struct {
	created, updated int64
	prov             []Provenance
}

// maxProvenance bounds the provenance entries merged into one edge; the
// oldest are dropped first.
const maxProvenance = 16

func encodeEdge(dst []byte, r *edgeRec, m *edgeMeta) []byte {
	e := enc{dst}
	e.u8(recordVersion)
	e.u32(r.src)
	e.u32(r.dst)
	e.u32(r.rel)
	e.u32(r.tenant)
	e.f64(r.weight)
	e.iv(m.created)
	e.iv(m.updated)
	e.uv(uint64(len(m.prov)))
	for _, p := range m.prov {
		e.str(p.ObservationID)
		e.str(p.SessionID)
		if p.Timestamp.IsZero() {
			e.iv(0)
		} else {
			e.iv(p.Timestamp.UnixNano())
		}
	}
	return e.b
}

func decodeEdgeHead(b []byte) (edgeRec, error) {
	d := dec{b: b}
	var r edgeRec
	if v := d.u8(); v != recordVersion {
		return r, fmt.Errorf("%w: edge record version %d", ErrCorrupt, v)
	}
	r.src = d.u32()
	r.dst = d.u32()
	r.rel = d.u32()
	r.tenant = d.u32()
	r.weight = d.f64()
	if d.err {
		return r, fmt.Errorf("%w: truncated edge record", ErrCorrupt)
	}
	return r, nil
}

// edgeHasProvenance reports whether an edge record lists provenance,
// without decoding it.
func edgeHasProvenance(b []byte) bool {
	d := dec{b: b[min(len(b), 1+16+8):]}
	d.iv()
	d.iv()
	return d.uv() > 0 && !d.err
}

func decodeEdge(b []byte) (edgeRec, edgeMeta, error) {
	r, err := decodeEdgeHead(b)
	var m edgeMeta
	if err != nil {
		return r, m, err
	}
	d := dec{b: b[1+16+8:]}
	m.created = d.iv()
	m.updated = d.iv()
	if n := d.uv(); n > 0 && n <= maxProvenance*4 {
		m.prov = make([]Provenance, n)
		for i := range m.prov {
			m.prov[i].ObservationID = d.str()
			m.prov[i].SessionID = d.str()
			if ts := d.iv(); ts != 0 {
				m.prov[i].Timestamp = time.Unix(0, ts).UTC()
			}
		}
	}
	if d.err {
		return r, m, fmt.Errorf("%w: truncated edge record", ErrCorrupt)
	}
	return r, m, nil
}

func mergeProvenance(list []Provenance, p Provenance) []Provenance {
	for _, q := range list {
		if q.ObservationID == p.ObservationID && q.SessionID == p.SessionID && q.Timestamp.Equal(p.Timestamp) {
			return list
		}
	}
	list = append(list, p)
	if len(list) > maxProvenance {
		list = append(list[:0], list[len(list)-maxProvenance:]...)
	}
	return list
}

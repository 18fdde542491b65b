package engine

import (
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// ExportTriplets calls fn with every triplet of project t (the edges
// imported into it), in edge id order, as an import would take them back:
// names (marked exact when they are), types, descriptions, aliases,
// locations and signatures, node and edge weights, the latest provenance,
// and the endpoints' project or org when they live elsewhere.
// Importing the output into an empty project rebuilds the same graph (nodes
// without any edge excepted: a triplet format cannot carry them). in is
// reused between calls.
func (s *Store) ExportTriplets(t Tenant, fn func(in *TripletInput) error) error {
	type row struct {
		edge     uint32
		src, dst uint32
	}
	var rows []row
	err := s.View(func(v *View) error {
		pe := v.ProjectEdges(t)
		if pe == nil {
			return nil
		}
		it := pe.Iterator()
		for it.HasNext() {
			e := it.Next()
			info := v.Edge(e)
			rows = append(rows, row{e, info.Src, info.Dst})
		}
		return nil
	})
	if err != nil {
		return err
	}
	var in TripletInput
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), 1024)]
		rows = rows[len(chunk):]
		err := s.db.View(func(txn *badger.Txn) error {
			for _, r := range chunk {
				rec, err := readEdge(txn, r.edge)
				if err != nil {
					return err
				}
				if rec == nil {
					continue // deleted since
				}
				er, m, err := decodeEdge(rec)
				if err != nil {
					return err
				}
				src, err := s.exportNode(txn, r.src)
				if err != nil {
					return err
				}
				dst, err := s.exportNode(txn, r.dst)
				if err != nil {
					return err
				}
				if src == nil || dst == nil {
					continue
				}
				s.mu.RLock()
				rel := s.g.rels[er.rel]
				s.mu.RUnlock()
				w := er.weight
				in = TripletInput{Source: src.Name, Relationship: rel, Target: dst.Name, SourceType: src.Type, TargetType: dst.Type,
					SourceDescription: src.Description, TargetDescription: dst.Description, Weight: &w,
					SourceAliases: src.Aliases, TargetAliases: dst.Aliases,
					SourceExact: src.Exact, TargetExact: dst.Exact, SourceLocation: src.Location, TargetLocation: dst.Location,
					SourceSignature: src.Signature, TargetSignature: dst.Signature}
				sw, tw := src.Weight, dst.Weight
				in.SourceWeight, in.TargetWeight = &sw, &tw
				if len(m.prov) > 0 {
					p := m.prov[len(m.prov)-1]
					in.Provenance = &p
				}
				if src.ProjectID != t.Project {
					in.SourceProjectID = src.ProjectID
				}
				if dst.OrgID != t.Org {
					in.TargetOrgID = dst.OrgID
				}
				if dst.ProjectID != t.Project {
					in.TargetProjectID = dst.ProjectID
				}
				if err := fn(&in); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("engine: export: %w", err)
		}
	}
	return nil
}

// exportNode reads node n's record (nil if gone).
func (s *Store) exportNode(txn *badger.Txn, n uint32) (*Node, error) {
	item, err := txn.Get(key32(pfxNode, n))
	if err == badger.ErrKeyNotFound {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out *Node
	err = item.Value(func(v []byte) error {
		rec, desc, err := decodeNode(v, true)
		if err != nil {
			return err
		}
		t, ok := s.tenantOf(rec.tenant)
		if !ok {
			return nil // gone from the graph since the snapshot (tenantOf)
		}
		out = &Node{Name: rec.name, Type: rec.typ, Description: desc, Aliases: rec.aliases, Weight: rec.weight, OrgID: t.Org, ProjectID: t.Project,
			Exact: rec.exact, Signature: rec.code.signature()}
		if l, ok := rec.code.location(); ok {
			out.Location = &l
		}
		return nil
	})
	return out, err
}

package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIDSetAgainstMaps drives the graph's three id indexes through random
// inserts, renames and removals (enough to grow the tables several times
// and fill them with tombstones) and compares every lookup with plain maps.
func TestIDSetAgainstMaps(t *testing.T) {
	g := newGraph()
	g.ensureTenant(0, Tenant{Org: "o", Project: "p"})
	g.ensureTenant(1, Tenant{Org: "o", Project: "q"})
	g.ensureRel(0, "r")
	g.ensureRel(1, "s")
	rng := rand.New(rand.NewPCG(1, 2))
	names := map[nameKey]uint32{}
	uuids := map[uuid]uint32{}
	triples := map[tripleKey]uint32{}
	const nodes = 3000
	nextEdge := uint32(0)
	live := func(id uint32) bool { return int(id) < len(g.nodes) && g.nodes[id].live }
	for step := range 60_000 {
		id := uint32(rng.IntN(nodes))
		switch op := rng.IntN(10); {
		case op < 4: // put or rename a node
			rec := nodeRec{tenant: uint32(rng.IntN(2)), norm: fmt.Sprintf("n%d_%d", id, rng.IntN(3)), uuid: newUUID()}
			if _, taken := names[nameKey{rec.tenant, rec.norm}]; taken {
				continue
			}
			if live(id) {
				n := g.nodes[id]
				delete(names, nameKey{n.tenant, n.norm})
				rec.uuid = n.uuid
			}
			g.putNode(id, rec)
			names[nameKey{rec.tenant, rec.norm}] = id
			uuids[rec.uuid] = id
		case op < 5: // remove a node with its edges
			if !live(id) {
				continue
			}
			for k, e := range triples {
				if k.src == id || k.dst == id {
					g.removeEdge(e)
					delete(triples, k)
				}
			}
			n := g.nodes[id]
			delete(names, nameKey{n.tenant, n.norm})
			delete(uuids, n.uuid)
			g.removeNode(id)
		case op < 8: // add an edge
			dst := uint32(rng.IntN(nodes))
			k := tripleKey{id, uint32(rng.IntN(2)), dst}
			if _, ok := triples[k]; ok || !live(id) || !live(dst) {
				continue
			}
			g.putEdge(nextEdge, edgeRec{src: k.src, rel: k.rel, dst: k.dst, weight: 0.5})
			triples[k] = nextEdge
			nextEdge++
		default: // remove an edge
			for k, e := range triples {
				g.removeEdge(e)
				delete(triples, k)
				break
			}
		}
		if step%5000 != 0 {
			continue
		}
		if g.byName.n != len(names) || g.byUUID.n != len(uuids) || g.byTriple.n != len(triples) {
			t.Fatalf("step %d: sizes %d %d %d, want %d %d %d", step, g.byName.n, g.byUUID.n, g.byTriple.n, len(names), len(uuids), len(triples))
		}
		for k, want := range names {
			if got, ok := g.nodeByName(k.tenant, k.norm); !ok || got != want {
				t.Fatalf("step %d: name %v -> %d %v, want %d", step, k, got, ok, want)
			}
		}
		for u, want := range uuids {
			if got, ok := g.nodeByUUID(u); !ok || got != want {
				t.Fatalf("step %d: uuid -> %d %v, want %d", step, got, ok, want)
			}
		}
		for k, want := range triples {
			if got, ok := g.edgeByTriple(k.src, k.rel, k.dst); !ok || got != want {
				t.Fatalf("step %d: triple %v -> %d %v, want %d", step, k, got, ok, want)
			}
		}
		for range 200 { // absent keys
			k := nameKey{uint32(rng.IntN(2)), fmt.Sprintf("n%d_%d", rng.IntN(nodes), rng.IntN(3))}
			got, ok := g.nodeByName(k.tenant, k.norm)
			if want, in := names[k]; ok != in || (ok && got != want) {
				t.Fatalf("step %d: name %v -> %d %v, want %d %v", step, k, got, ok, want, in)
			}
			tk := tripleKey{uint32(rng.IntN(nodes)), uint32(rng.IntN(2)), uint32(rng.IntN(nodes))}
			got, ok = g.edgeByTriple(tk.src, tk.rel, tk.dst)
			if want, in := triples[tk]; ok != in || (ok && got != want) {
				t.Fatalf("step %d: triple %v -> %d %v, want %d %v", step, tk, got, ok, want, in)
			}
		}
	}
}

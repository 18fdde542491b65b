package engine

import (
	"encoding/binary"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	badger "github.com/dgraph-io/badger/v4"
)

// Store upgrades. Open reads the version record first; when it is older
// than storeVersion, the steps below run in order, each upgrading by one
// version, before anything is loaded into memory. A step works on Badger
// alone (the graph image is still empty) and must be safe to interrupt:
// either it commits in one Badger transaction, or running it again over
// its own partial output gives the same result. The version record is
// written after the step, so a crash makes the next Open run it again.
//
// To change the store's format, bump storeVersion and append a step whose
// from is the previous version.

// oldestVersion is the oldest store version Open can upgrade.
const oldestVersion = 2

type migration struct {
	from uint64 // the version the step upgrades; it leaves from+1
	what string // for logs and errors
	run  func(s *Store) error
}

// migrations are the upgrade steps, ordered by from, without gaps from
// oldestVersion to storeVersion-1 (TestMigrationsOrdered).
var migrations = []migration{
	{from: 2, what: "name keys fold separators instead of deleting them", run: migrateNameKeysV2},
	{from: 3, what: "session keys scoped by org", run: func(s *Store) error { return migrateSessionKeys(s.db) }},
	// Version 5 reads every record of version 4 as it is: a node record
	// of version 1 is a folded name without code fields. The step only
	// moves the version, so that a build that knows no exact names
	// refuses the store once it may hold some.
	{from: 4, what: "exact names and code fields in node records", run: func(*Store) error { return nil }},
}

// migrate upgrades the store from version ver to storeVersion.
func (s *Store) migrate(ver uint64) error {
	if ver > storeVersion {
		return fmt.Errorf("%w: store version %d is newer than this build's %d", ErrCorrupt, ver, storeVersion)
	}
	if ver < oldestVersion {
		return fmt.Errorf("%w: store version %d is older than the oldest this build upgrades (%d)", ErrCorrupt, ver, oldestVersion)
	}
	for ; ver < storeVersion; ver++ {
		i := int(ver - oldestVersion)
		if i >= len(migrations) || migrations[i].from != ver {
			return fmt.Errorf("%w: no upgrade step from store version %d", ErrCorrupt, ver)
		}
		m := migrations[i]
		start := time.Now()
		if err := m.run(s); err != nil {
			return fmt.Errorf("engine: upgrade store from version %d (%s): %w", ver, m.what, err)
		}
		if err := s.db.Update(func(txn *badger.Txn) error {
			return txn.Set([]byte(keyMetaVer), binary.BigEndian.AppendUint64(nil, ver+1))
		}); err != nil {
			return fmt.Errorf("engine: upgrade store to version %d: %w", ver+1, err)
		}
		s.log.Info("store upgraded", "from", ver, "to", ver+1, "step", m.what, "took", time.Since(start).String())
	}
	return nil
}

// migrateNameKeysV2 upgrades from version 2, whose identity rule deleted
// separators (normalizeNameV2), to NormalizeName, which folds them. Node
// records hold names as sent and memory rebuilds the name index from them
// at every Open, so nothing stored is keyed by the old rule; what must
// survive is what it merged. Its nodes cannot be split: the edges of
// "kill_src_21_0" and "kill_src_2_10" were merged into one node and nothing
// records which came from which. So they stay one node, and every alias
// that the old rule resolved to its node (same old key) but the new rule
// does not (different new key) is stored as a legacy key of the node
// (pfxLegacy), under which lookups and imports still find it. Surface forms
// the store never saw are not covered: "Kill-Src-21-0" is a new node.
//
// No new key can collide with another node's: NormalizeName is finer than
// normalizeNameV2 (equal new keys imply equal old keys, tested), and a
// version-2 store held one node per old key per project. The step checks
// that anyway and lets a node's own key win over another node's legacy key,
// with a warning, should a damaged store break it.
//
// The step is idempotent: it derives the same keys from the node records
// each time and only sets them.
func migrateNameKeysV2(s *Store) error {
	legacy := map[nameKey]uint32{}
	err := s.iterate([]byte{pfxNode}, func(k, v []byte) error {
		id := binary.BigEndian.Uint32(k[1:])
		rec, _, err := decodeNode(v, false)
		if err != nil {
			return fmt.Errorf("node %d: %w", id, err)
		}
		old := normalizeNameV2(rec.name)
		for _, a := range rec.aliases {
			if normalizeNameV2(a) != old {
				continue // an explicit alias (e.g. an IRI) was never a key
			}
			lk := nameKey{rec.tenant, NormalizeName(a)}
			if lk.norm == rec.norm {
				continue
			}
			if other, dup := legacy[lk]; dup && other != id {
				s.log.Warn("upgrade: two nodes claim one name key; keeping the first", "key", lk.norm, "node", other, "other", id)
				continue
			}
			legacy[lk] = id
		}
		return nil
	})
	if err != nil || len(legacy) == 0 {
		return err
	}
	if err := s.iterate([]byte{pfxNode}, func(k, v []byte) error {
		rec, _, err := decodeNode(v, false)
		if err != nil {
			return err
		}
		if other, ok := legacy[nameKey{rec.tenant, rec.norm}]; ok {
			s.log.Warn("upgrade: a node's name key is another node's alias; the name wins", "key", rec.norm, "node", binary.BigEndian.Uint32(k[1:]), "alias of", other)
			delete(legacy, nameKey{rec.tenant, rec.norm})
		}
		return nil
	}); err != nil {
		return err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for lk, id := range legacy {
		if err := wb.Set(legacyKey(lk), binary.BigEndian.AppendUint32(nil, id)); err != nil {
			return err
		}
	}
	if err := wb.Flush(); err != nil {
		return err
	}
	s.log.Info("upgrade: names merged by the old identity rule stay merged", "legacy keys", len(legacy))
	return nil
}

// loadLegacy reads the legacy name keys into memory (after the nodes).
// An entry whose node is gone, or that no longer satisfies the invariants
// of graph.legacy, can only be left by a crash inside a multi-transaction
// delete; it is dropped from Badger too.
func (s *Store) loadLegacy() error {
	g := s.g
	var stale [][]byte
	err := s.iterate([]byte{pfxLegacy}, func(k, v []byte) error {
		if len(k) < 5 || len(v) != 4 {
			return fmt.Errorf("%w: legacy key %q", ErrCorrupt, k)
		}
		lk := nameKey{binary.BigEndian.Uint32(k[1:5]), string(k[5:])}
		id := binary.BigEndian.Uint32(v)
		if !g.legacyValid(lk, id) {
			stale = append(stale, append([]byte(nil), k...))
			return nil
		}
		g.legacy[lk] = id
		return nil
	})
	if err != nil || len(stale) == 0 {
		return err
	}
	s.log.Warn("dropping stale legacy name keys", "keys", len(stale))
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range stale {
		if err := wb.Delete(k); err != nil {
			return err
		}
	}
	return wb.Flush()
}

// legacyValid reports whether lk may be a legacy key of node id: the node
// is live in lk's tenant, one of its aliases has the key, and the key is
// not the key of any live node (its own included).
func (g *graph) legacyValid(lk nameKey, id uint32) bool {
	if int(id) >= len(g.nodes) || !g.nodes[id].live || g.nodes[id].tenant != lk.tenant {
		return false
	}
	if _, taken := find(&g.byName, hashName(lk.tenant, lk.norm), nameMatch{g, lk.tenant, lk.norm}); taken {
		return false
	}
	for _, a := range g.nodes[id].aliases {
		if NormalizeName(a) == lk.norm {
			return true
		}
	}
	return false
}

// normalizeNameV2 is the identity rule of store versions up to 2: case
// folded, every '_', '-' and whitespace rune deleted. It merged names that
// differ only by where a separator sits ("kill_src_2_10" and
// "kill_src_21_0", Freebase "/m/015g7" and "/m/015g_7"). The migration
// from version 2 needs it to tell which aliases of a node the old rule
// resolved to that node; nothing else may use it.
func normalizeNameV2(name string) string {
	var dst []byte
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '_' || c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				continue
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		if unicode.IsSpace(r) {
			continue
		}
		dst = utf8.AppendRune(dst, foldRune(r))
	}
	return string(dst)
}

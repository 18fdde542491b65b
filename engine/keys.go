package engine

import "encoding/binary"

// Badger key spaces, one prefix byte each. Keys of records addressed by a
// dense id end in the big-endian id so iteration yields id order.
const (
	pfxNode     = 'n' // n<u32 dense>         -> node record
	pfxEdge     = 'e' // e<u32 edge/64>       -> page of up to 64 edge records (pages.go)
	pfxVector   = 'v' // v<u32 dense>         -> little-endian float32s
	pfxTenant   = 'p' // p<u32 tenant>        -> org \x00 project
	pfxRel      = 'r' // r<u32 rel>           -> relationship name
	pfxChange   = 'c' // c<u64 seq>           -> change-log entry for indexers
	pfxMeta     = 'm' // m<name>              -> store metadata
	pfxObs      = 'o' // o<u32 dense>         -> observation record
	pfxObsVec   = 'w' // w<u32 dense>         -> observation vector
	pfxAux      = 'x' // x<owner>/...         -> records owned by other packages (index snapshots)
	pfxLegacy   = 'a' // a<u32 tenant><key>   -> u32 dense: a name key of a node merged by an older identity rule (migrate.go)
	keyMetaDim  = "mdim"
	keyMetaEmb  = "memb"
	keyMetaNode = "mnext_node"
	keyMetaEdge = "mnext_edge"
	keyMetaObs  = "mnext_obs"
	keyMetaSeq  = "mseq"
	keyMetaVer  = "mversion"
	keyMetaID   = "mstore_id" // the store's identity, a UUID string (Store.ID)
)

// The key spaces of the packages beside engine, which reach them through
// the store's KV handle. Their layout is listed here, next to the core's,
// so that one table holds every prefix in use and the upgrade steps of
// migrate.go can move their records without importing them.
const (
	PrefixToken      = 't' // t<sha256 hex>       -> token record (engine/auth)
	PrefixTokenUse   = 'u' // u<sha256 hex>       -> u64 unix ms of the token's last use on this node (engine/auth)
	PrefixLog        = 'l' // l<org>0<session>0<u64 ns><id> -> injection log, JSON (engine/sessionlog)
	PrefixLease      = 's' // s<org>0<session>0   -> lease, JSON (engine/delivery)
	PrefixInject     = 'q' // q<org>0<session>0<u64 seq> -> inject, JSON (engine/delivery)
	PrefixInjectHash = 'h' // h<org>0<session>0<hash> -> seq: dedupe (engine/delivery)
	PrefixSessionOrg = 'k' // k<session>0<org>    -> (empty): the orgs that use a session id (sessionkeys.go)
	PrefixConfig     = 'g' // g<kind>0<key>       -> configuration document (engine/configstore)
	PrefixCluster    = 'z' // z<stream>           -> u64 sequence applied, note (AppliedLog, applied.go; compose/service/cluster); z<stream>0<id> -> a keyed write applied
	// MetaInjectSeq names the inject queue's sequence (KV.Sequence), kept
	// under pfxMeta like the core's counters.
	MetaInjectSeq = "inject_seq"
)

// storeVersion is written with every batch. Open upgrades older stores
// from oldestVersion on through the steps of migrate.go and refuses other
// versions. History: 2 keyed nodes by names with separators deleted; 3
// folds them instead (NormalizeName) and adds pfxLegacy; 4 scopes session
// keys (leases, injects, logs) by org and adds PrefixSessionOrg; 5 adds
// exact names and code fields to node records (version 2 records, for
// those nodes only: older records read as they did).
const storeVersion = 5

func key32(p byte, id uint32) []byte {
	k := make([]byte, 5)
	k[0] = p
	binary.BigEndian.PutUint32(k[1:], id)
	return k
}

func key64(p byte, id uint64) []byte {
	k := make([]byte, 9)
	k[0] = p
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

// legacyKey is the Badger key of a legacy name key (pfxLegacy).
func legacyKey(k nameKey) []byte {
	b := make([]byte, 5, 5+len(k.norm))
	b[0] = pfxLegacy
	binary.BigEndian.PutUint32(b[1:], k.tenant)
	return append(b, k.norm...)
}

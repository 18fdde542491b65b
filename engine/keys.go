package engine

import "encoding/binary"

// Badger key spaces, one prefix byte each. Keys of records addressed by a
// dense id end in the big-endian id so iteration yields id order.
const (
	pfxNode          = 'n' // n<u32 dense>         -> node record
	pfxEdge          = 'e' // e<u32 edge/64>       -> page of up to 64 edge records (pages.go)
	pfxVector        = 'v' // v<u32 dense>         -> little-endian float32s
	pfxTenant        = 'p' // p<u32 tenant>        -> org \x00 project
	pfxRel           = 'r' // r<u32 rel>           -> relationship name
	pfxChange        = 'c' // c<u64 seq>           -> change-log entry for indexers
	pfxMeta          = 'm' // m<name>              -> store metadata
	pfxToken         = 't' // t<sha256>            -> token record
	pfxObs           = 'o' // o<u32 dense>         -> observation record
	pfxObsVec        = 'w' // w<u32 dense>         -> observation vector
	pfxLog           = 'l' // l<org>0<session>0<u64 ns><id> -> injection log (JSON)
	pfxLease         = 's' // s<org>0<session>0   -> lease (JSON)
	pfxInject        = 'q' // q<org>0<session>0<u64 seq> -> inject (JSON)
	pfxInjectHash    = 'h' // h<org>0<session>0<hash> -> seq (dedupe)
	pfxSessionOrg    = 'k' // k<session>0<org>    -> (empty): the orgs that use a session id
	pfxAux           = 'x' // x<owner>/...         -> records owned by other packages (index snapshots)
	pfxConfig        = 'g' // g<kind>/<key>        -> configuration documents
	pfxLegacy        = 'a' // a<u32 tenant><key>   -> u32 dense: a name key of a node merged by an older identity rule (migrate.go)
	keyMetaDim       = "mdim"
	keyMetaEmb       = "memb"
	keyMetaNode      = "mnext_node"
	keyMetaEdge      = "mnext_edge"
	keyMetaObs       = "mnext_obs"
	keyMetaInjectSeq = "minject_seq"
	keyMetaSeq       = "mseq"
	keyMetaVer       = "mversion"
)

// storeVersion is written with every batch. Open upgrades older stores
// from oldestVersion on through the steps of migrate.go and refuses other
// versions. History: 2 keyed nodes by names with separators deleted; 3
// folds them instead (NormalizeName) and adds pfxLegacy; 4 scopes session
// keys (leases, injects, logs) by org and adds pfxSessionOrg.
const storeVersion = 4

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

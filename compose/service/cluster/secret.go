package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/kgctx/kgctx/internal/secretfile"
)

// MinSecretBytes is the least length of a cluster secret.
const MinSecretBytes = 32

// maxSecretBytes bounds what ReadSecret reads of a file.
const maxSecretBytes = 4 << 10

// ErrSecretMismatch: the cluster's NATS servers or its signed marker
// record were made with another secret than this node's.
var ErrSecretMismatch = errors.New("cluster: the cluster secret differs")

// ReadSecret reads a cluster secret from path: a regular file that only
// its owner may read (mode & 0o077 == 0), holding at least MinSecretBytes
// bytes (one trailing newline is not part of it).
func ReadSecret(path string) ([]byte, error) {
	b, err := secretfile.Read(path, maxSecretBytes)
	if err != nil {
		return nil, fmt.Errorf("cluster secret: %w", err)
	}
	b, _ = bytes.CutSuffix(b, []byte("\n"))
	return checkSecret(b, path)
}

func checkSecret(b []byte, from string) ([]byte, error) {
	if len(b) < MinSecretBytes {
		return nil, fmt.Errorf("cluster secret: %s holds %d bytes, want at least %d (e.g. head -c 32 /dev/urandom | base64)", from, len(b), MinSecretBytes)
	}
	return b, nil
}

// Keys are what a node derives from the cluster secret, each for one use,
// bound to the cluster's name: a key of one use or one cluster is no key
// of another. Safe for concurrent use (read-only once made).
type Keys struct {
	cluster string
	// NATS credentials of the embedded servers: the client user's
	// password and the route password.
	natsClient, natsRoute string
	log                   []byte // MACs of the logged writes
	kv                    []byte // MACs of the members' and placement records
	principal             []byte // MACs of forwarded principals
	ids                   []byte // seeds of a logged write's ids
}

// natsUser is the one user of an embedded NATS server (its password is
// derived from the secret).
const natsUser = "kgctx"

// NewKeys derives the keys of cluster from secret (at least
// MinSecretBytes).
func NewKeys(secret []byte, cluster string) (*Keys, error) {
	if _, err := checkSecret(secret, "the secret given"); err != nil {
		return nil, err
	}
	d := func(use string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("kgctx " + use + " " + cluster))
		return m.Sum(nil)
	}
	return &Keys{cluster: cluster,
		natsClient: hex.EncodeToString(d("nats client")), natsRoute: hex.EncodeToString(d("nats route")),
		log: d("log"), kv: d("kv"), principal: d("principal"), ids: d("ids")}, nil
}

// Cluster is the name the keys are bound to.
func (k *Keys) Cluster() string { return k.cluster }

// NATSUser is the user and password a node presents to an embedded NATS
// server of its cluster.
func (k *Keys) NATSUser() (user, password string) { return natsUser, k.natsClient }

// PrincipalMAC is the MAC of a principal one node forwards to another
// with a request (the API encodes and checks it).
func (k *Keys) PrincipalMAC(data []byte) []byte { return mac(k.principal, "principal", data) }

// idSeed is the seed of the ids a logged write draws: unpredictable
// without the secret, the same on every replica.
func (k *Keys) idSeed(stream string, seq uint64) []byte {
	return mac(k.ids, "ids", []byte(stream), binary.BigEndian.AppendUint64(nil, seq))
}

// mac is HMAC-SHA256 under key of a use and fields, each length-prefixed
// so that no two lists of fields share an input.
func mac(key []byte, use string, fields ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	var n [binary.MaxVarintLen64]byte
	for _, f := range append([][]byte{[]byte(use)}, fields...) {
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(f)))])
		m.Write(f)
	}
	return m.Sum(nil)
}

// keyedID is the write id (idHeader) of the index-th write of a request
// that scope (the caller) sent with the idempotency key key: the same for
// every retry of that request, unpredictable without the secret, and
// apart from any other caller's. "k" marks it: the appliers remember the
// keyed ids they applied (a random id never comes twice but in a replay,
// which they refuse anyway).
func (k *Keys) keyedID(scope, key string, index int64) string {
	m := mac(k.log, "idempotency", []byte(scope), []byte(key), binary.BigEndian.AppendUint64(nil, uint64(index)))
	return keyedPrefix + hex.EncodeToString(m[:16])
}

// keyedPrefix starts a keyed write id; a random one is 32 hex digits.
const keyedPrefix = "k"

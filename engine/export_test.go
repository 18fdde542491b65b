package engine

import "testing"

// Internals for the external tests (package engine_test), which, unlike
// the package's own tests, may import the packages beside engine.

const StoreVersion = storeVersion

func MigrateSessionKeys(s *Store) error { return migrateSessionKeys(s.db) }

func SetStoreVersion(t testing.TB, s *Store, v uint64) { setStoreVersion(t, s, v) }

func StoredVersion(t testing.TB, s *Store) uint64 { return storedVersion(t, s) }

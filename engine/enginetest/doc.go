// Package enginetest is the test kit of the store: it opens an
// engine.Store for a test and runs the store's consistency check
// (engine.Store.Check) when the test ends, failing the test on a
// violation, the way every test of the repository should leave a store.
//
// It holds no key space and no state of its own. Its functions take the
// test's testing.TB and must be called from the test's goroutine (they
// call t.Fatal).
package enginetest

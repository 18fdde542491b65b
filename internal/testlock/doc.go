// Package testlock serialises the heaviest tests of the repository across
// the test binaries that `go test ./...` runs at the same time.
//
// A test that starts a cluster (several NATS servers with JetStream, or
// several kgctx processes) elects leaders over timers: on a small machine
// running every package's tests at once, two such tests in two packages
// starve each other's elections and time out, and the loopback ports each
// picked free can be taken by the other between the pick and the bind.
// Cluster takes a lock shared by every test process of the machine (a
// file lock in the system's temporary folder), so at most one package
// runs cluster tests at a time; the other packages' tests still run
// beside them.
//
// # Concurrency
//
// Cluster is safe for concurrent use: within a process the lock is
// counted, so parallel tests of one package, or one test that calls it
// twice, share it.
//
// # Memory ownership
//
// Nothing is shared with callers.
//
// testlock's only error path fails the calling test; it has no errors.go.
package testlock

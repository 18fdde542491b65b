// Package service wires the parts a kgctx process runs (App: the store and
// its concerns beside it, the seed index, the Cedar PEP, the composer, the
// settings and the in-session injector; Open, Close) and runs the
// workflows a transport calls once it has decoded and authorised a request
// (Claim: lease, compose, gate, enqueue, hand over; Feedback at the app's
// rate; SetPolicies: validate, store, put in force), and what a
// cluster's move of an org between shards asks of a store (OrgHasData,
// DropOrg, OrgRecords: whether it holds anything of an org, removing
// it, listing it to compare two stores). cmd's offline
// commands, bench and the HTTP API (package api) all open an App here, so
// only the api package links Echo.
//
// Concurrency: an App is safe for concurrent use; Close must come after
// every call has returned. Lifetime: Open loads the store's graph and the
// indexes (in parallel), Close lets the indexes catch up with every write
// and closes them and the store.
package service

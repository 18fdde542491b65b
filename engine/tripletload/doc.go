// Package tripletload loads triplet files into a store (Load): the codecs
// of engine/tripletio joined to engine.Store's Import. It is apart from
// tripletio so that the codecs, which the Go client uses, link no storage.
//
// Load is safe for concurrent use as far as the store is (each call
// validates its files, then imports them batch by batch).
package tripletload

// Package model holds the values the store takes and gives, with no
// storage: a triplet as an extractor sends it (TripletInput, Provenance,
// Location), the tenant it goes to (Tenant), the limits and rules that
// validate it (Limits, ValidateTriplet, ValidateID, NormalizeRelationship),
// what an import did (ImportResult, LineError), an observation
// (Observation, ObservationMeta), a project's counts (Stats) and a
// cluster's log positions (Positions). They are the vocabulary of the
// HTTP API's bodies and of the triplet files, so the Go client
// (api/client) and the codecs (engine/tripletio) use them without linking
// Badger or roaring.
//
// engine aliases every type (engine.TripletInput is model.TripletInput)
// and re-exports the functions and sentinels, so code written against
// engine keeps working; the store's own records are encoded by engine's
// codec, never from these types' JSON.
//
// It is engine's one leaf package: the core imports it, it imports nothing
// of engine (internal/layout checks both).
//
// Concurrency: the functions are safe for concurrent use; a Positions is
// safe for concurrent use, the other values are plain data. Validation
// trims the strings of the TripletInput it is given in place.
package model

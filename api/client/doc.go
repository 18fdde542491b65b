// Package client is a typed Go client for the kgctx HTTP API (API.md): it
// builds requests, decodes answers and turns error bodies into *APIError.
// It never imports the server (package api) and never Echo, and links no
// storage: its values are engine/model's and its codecs engine/tripletio's,
// neither of which imports Badger or roaring (internal/layout checks it).
//
// A Client is safe for concurrent use; its methods take a context first and
// return values the caller owns.
package client

//go:build !unix

package codeindex

import "io/fs"

// owned: ownership is not checked on this platform (Windows keeps it in
// ACLs, which this package does not read).
func owned(fs.FileInfo) bool { return true }

// untrusted: see owned; the user's profile directory is private by
// default there.
func untrusted(fs.FileInfo) string { return "" }

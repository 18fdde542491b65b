//go:build !unix

package testlock

import "os"

// Elsewhere the tests are not serialised: only the in-process count
// applies.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) {}

package codeindex

import "errors"

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotModule: the directory has no go.mod (and no module path was
	// given).
	ErrNotModule = errors.New("codeindex: not a Go module (no go.mod)")
	// ErrImportCycle: packages of the module import each other in a cycle
	// (the message names them: "import cycle: a -> b -> a"). Nothing was
	// written.
	ErrImportCycle = errors.New("codeindex: import cycle")
	// ErrOutsideRoot: a file is reached through a symbolic link that
	// leaves the indexed root; it is not read.
	ErrOutsideRoot = errors.New("codeindex: symbolic link leaves the indexed root")
	// ErrTooLarge: a source file is over MaxFileSize; it is not read.
	ErrTooLarge = errors.New("codeindex: file too large")
	// ErrUntrusted: a state directory or file that another user owns or
	// may write (group or others): what it holds is not trusted.
	ErrUntrusted = errors.New("codeindex: untrusted state")
)

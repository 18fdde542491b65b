// Package layout holds the repository's structural tests: the one-way
// dependency order of DESIGN.md and the rule that only api imports Echo.
// It has no code of its own.
package layout

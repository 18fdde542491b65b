//go:build customtag

// Package plugin is built only with -tags customtag.
package plugin

// Load loads nothing.
func Load() {}

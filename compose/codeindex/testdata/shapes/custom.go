//go:build customtag

package shapes

// Custom is built only with -tags customtag.
func Custom() string { return archName() }

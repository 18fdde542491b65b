package integration

import (
	"testing"

	"example.com/shapes"
)

// A directory of tests alone is a package too.
func TestSave(t *testing.T) {
	if err := shapes.Save(&shapes.Renamed{}); err != nil {
		t.Fatal(err)
	}
}

//go:build !linux

package resident

// DropMapped does nothing where /proc/self/maps is not there to name the
// mappings.
func DropMapped(dir string, suffixes ...string) (int64, error) { return 0, nil }

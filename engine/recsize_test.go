package engine

import (
	"testing"
	"unsafe"
)

// TestRecordSizes pins the in-memory records' sizes: at 1M nodes and 5M
// edges each byte of an edge record is 5 MB of live heap, and a flag
// added beside the weight pads the record by 8 (edge liveness is a bit in
// graph.edgeLiveW for that reason).
func TestRecordSizes(t *testing.T) {
	if s := unsafe.Sizeof(edgeRec{}); s != 24 {
		t.Errorf("edgeRec is %d bytes, want 24", s)
	}
	if s := unsafe.Sizeof(nodeRec{}); s > 136 {
		t.Errorf("nodeRec is %d bytes, want at most 136", s)
	}
}

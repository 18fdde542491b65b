package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestAppliedLogRecordsAndResumes(t *testing.T) {
	s, dir := openTest(t, nil)
	for _, bad := range []string{"", "a\x00b"} {
		if _, err := s.KV().AppliedLog(bad); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("AppliedLog(%q): %v, want ErrInvalidInput", bad, err)
		}
	}
	l, err := s.KV().AppliedLog("KGCTX_c_s1")
	if err != nil {
		t.Fatal(err)
	}
	if seq, note, err := l.Applied(); seq != 0 || note != nil || err != nil {
		t.Fatalf("never recorded: %d %q %v", seq, note, err)
	}
	if err := l.Record(7, []byte(`[1]`), AppliedKeyed{ID: "k1", Value: []byte("r1")}); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(9, nil, AppliedKeyed{ID: "k2", Value: []byte("r2")}, AppliedKeyed{ID: "k3", Value: []byte("r3")}); err != nil {
		t.Fatal(err)
	}
	// Another stream whose name extends this one's shares no record.
	other, err := s.KV().AppliedLog("KGCTX_c_s10")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Record(3, nil, AppliedKeyed{ID: "x", Value: []byte("rx")}); err != nil {
		t.Fatal(err)
	}

	s = reopen(t, s, dir, nil)
	l, _ = s.KV().AppliedLog("KGCTX_c_s1")
	if seq, note, err := l.Applied(); seq != 9 || note != nil || err != nil {
		t.Fatalf("after restart: %d %q %v, want 9, no note", seq, note, err)
	}
	if v, err := l.Keyed("k1"); err != nil || string(v) != "r1" {
		t.Fatalf("Keyed(k1): %q %v", v, err)
	}
	if _, err := l.Keyed("x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Keyed of another stream: %v, want ErrNotFound", err)
	}
	var ids []string
	if err := l.EachKeyed(func(id string, _ []byte) error { ids = append(ids, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"k1", "k2", "k3"}; !slices.Equal(ids, want) {
		t.Fatalf("EachKeyed: %v, want %v", ids, want)
	}
	if err := l.Forget([]string{"k1", "k3", "absent"}); err != nil {
		t.Fatal(err)
	}
	ids = nil
	if err := l.EachKeyed(func(id string, _ []byte) error { ids = append(ids, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"k2"}; !slices.Equal(ids, want) {
		t.Fatalf("after Forget: %v, want %v", ids, want)
	}
	other, _ = s.KV().AppliedLog("KGCTX_c_s10")
	if seq, _, err := other.Applied(); seq != 3 || err != nil {
		t.Fatalf("other stream: %d %v, want 3", seq, err)
	}
}

// TestAppliedLogForgetsInBatches deletes more records than one
// transaction of Forget holds.
func TestAppliedLogForgetsInBatches(t *testing.T) {
	s, _ := openTest(t, nil)
	l, err := s.KV().AppliedLog("s")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 2*forgetBatch + 5 {
		id := fmt.Sprintf("k%05d", i)
		ids = append(ids, id)
		if err := l.Record(uint64(i+1), nil, AppliedKeyed{ID: id, Value: []byte{1}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Forget(ids); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := l.EachKeyed(func(string, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d records left", n)
	}
	if seq, _, _ := l.Applied(); seq != uint64(2*forgetBatch+5) {
		t.Fatalf("Applied: %d", seq)
	}
}

package tripletio

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine/model"
)

// genReader produces n fixed-width records in format f on demand, so the
// test knows exactly how far ahead of the records returned the Reader has
// read. It never holds the whole input.
type genReader struct {
	f        Format
	n, next  int // records in total, next record to produce
	produced int // bytes handed out
	pending  []byte
}

// genDesc pads records to ~200 bytes so that the input (40 MiB for JSON)
// dwarfs the buffers.
var genDesc = strings.Repeat("d", 140)

// record renders record i cheaply (the generator must not dominate the
// test's run time): fixed-width ids, a constant description.
func (g *genReader) record(i int) string {
	b := make([]byte, 0, 320)
	id := func(n int) []byte { return fmt.Appendf(nil, "node_%08d", n) }
	src, tgt := id(i), id((i*7919)%g.n)
	switch g.f {
	case JSON, JSONL:
		b = append(b, `{"source":"`...)
		b = append(b, src...)
		b = append(b, `","relationship":"links_to","target":"`...)
		b = append(b, tgt...)
		b = append(b, `","sourceDescription":"`...)
		b = append(b, genDesc...)
		b = append(b, `","weight":0.5}`...)
		if g.f == JSON {
			if i < g.n-1 {
				b = append(b, ',')
			} else {
				b = append(b, ']')
			}
		}
	case TSV:
		b = append(append(append(append(b, src...), "\tlinks_to\t"...), tgt...), ' ')
		b = append(append(b, genDesc...), "\t0.5"...)
	default:
		b = append(append(append(append(b, src...), ",links_to,\""...), tgt...), ' ')
		b = append(append(b, genDesc...), "\",0.5"...)
	}
	return string(append(b, '\n'))
}

func (g *genReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.pending) == 0 {
			if g.next == g.n {
				break
			}
			if g.next == 0 && g.f == JSON {
				g.pending = append(g.pending, "[\n"...)
			}
			g.pending = append(g.pending, g.record(g.next)...)
			g.next++
		}
		c := copy(p[n:], g.pending)
		g.pending = g.pending[c:]
		n += c
	}
	g.produced += n
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestReader_Streaming feeds 200k generated records through each format and
// checks that the Reader stays within a fixed distance of the records it
// returned (it never reads the input whole) and that the heap stays far
// below the input size.
func TestReader_Streaming(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const n = 200_000
	const window = 512 << 10 // buffers: bufio, JSON decoder, JSON chunking
	for _, f := range []Format{JSONL, JSON, TSV, CSV} {
		t.Run(f.String(), func(t *testing.T) {
			g := &genReader{f: f, n: n}
			lineLen := len(g.record(1))
			total := n * lineLen
			r, err := NewReader(g, Auto)
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != f {
				t.Fatalf("sniffed %v", r.Format())
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			base, peak := ms.HeapAlloc, uint64(0)
			var tr model.TripletInput
			count := 0
			for {
				err := r.Next(&tr)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				count++
				if ahead := g.produced - count*lineLen; ahead > window {
					t.Fatalf("after %d records the Reader had read %d bytes ahead", count, ahead)
				}
				if count%40_000 == 0 {
					// Live memory, not garbage awaiting collection: the
					// question is what the Reader retains.
					runtime.GC()
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				}
			}
			if count != n {
				t.Fatalf("%d records, want %d", count, n)
			}
			grown := int64(peak) - int64(base)
			t.Logf("%v: input %d MiB, heap peak +%d KiB", f, total>>20, grown>>10)
			if grown > int64(total)/4 {
				t.Fatalf("heap grew by %d bytes for a %d-byte input", grown, total)
			}
		})
	}
}

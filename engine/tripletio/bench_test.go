package tripletio

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/kgctx/kgctx/engine/model"
)

// benchInput renders n triplets shaped like extractor output: identifier-like
// names of 8-40 bytes, a few dozen predicates, a weight on most rows.
func benchInput(f Format, n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	name := func() string {
		return fmt.Sprintf("%s_%d", [...]string{"AuthService", "PostgresDB", "payments-api", "UserRepository", "cache.redis.primary", "order"}[rng.IntN(6)], rng.IntN(100_000))
	}
	var b bytes.Buffer
	enc := NewEncoder(&b)
	if f == JSON {
		b.WriteString("[\n")
	}
	for i := range n {
		t := model.TripletInput{Source: name(), Relationship: "rel_" + strconv.Itoa(rng.IntN(40)), Target: name()}
		if rng.IntN(4) > 0 {
			w := float64(rng.IntN(1000)) / 1000
			t.Weight = &w
		}
		switch f {
		case JSON, JSONL:
			if f == JSON && i > 0 {
				b.WriteString(",")
			}
			enc.Encode(&t)
		case TSV, CSV:
			sep := map[Format]string{TSV: "\t", CSV: ","}[f]
			b.WriteString(t.Source + sep + t.Relationship + sep + t.Target)
			if t.Weight != nil {
				b.WriteString(sep + strconv.FormatFloat(*t.Weight, 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
	}
	if f == JSON {
		b.WriteString("]\n")
	}
	return b.Bytes()
}

func benchReader(b *testing.B, f Format) {
	for _, n := range []int{100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			data := benchInput(f, n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			var t model.TripletInput
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(data), f)
				if err != nil {
					b.Fatal(err)
				}
				count := 0
				for {
					err := r.Next(&t)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					count++
				}
				if count != n {
					b.Fatalf("%d triplets", count)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "triplets/s")
		})
	}
}

func BenchmarkReader_JSONL(b *testing.B) { benchReader(b, JSONL) }
func BenchmarkReader_JSON(b *testing.B)  { benchReader(b, JSON) }
func BenchmarkReader_TSV(b *testing.B)   { benchReader(b, TSV) }
func BenchmarkReader_CSV(b *testing.B)   { benchReader(b, CSV) }

func BenchmarkEncoder_NDJSON(b *testing.B) {
	ts := []model.TripletInput{{Source: "AuthService_123", Relationship: "depends_on", Target: "PostgresDB_9", Weight: ptr(0.7)}}
	enc := NewEncoder(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		enc.Encode(&ts[0])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "triplets/s")
}

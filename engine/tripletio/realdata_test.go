package tripletio

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgctx/kgctx/engine/model"
	"github.com/kgctx/kgctx/internal/datasets"
)

func TestReader_RealDatasets(t *testing.T) {
	root, err := datasets.Find("")
	if err != nil {
		t.Skipf("%v; skipping the real-data test", err)
	}
	for _, c := range []struct {
		path string
		rows int
	}{
		{"fb15k-237/train.txt.gz", 272_115}, // CRLF line ends, Freebase ids
		{"wn18rr/train.txt.gz", 86_835},
	} {
		t.Run(c.path, func(t *testing.T) {
			path := filepath.Join(root, c.path)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s: %v", path, err)
			}
			// Auto on the raw file exercises gzip sniffing; OpenFile
			// decompresses by extension.
			for _, open := range []func(string) (io.ReadCloser, error){
				func(p string) (io.ReadCloser, error) { return os.Open(p) },
				OpenFile,
			} {
				rc, err := open(path)
				if err != nil {
					t.Fatal(err)
				}
				r, err := NewReader(rc, FormatFromPath(path))
				if err != nil {
					t.Fatal(err)
				}
				var tr model.TripletInput
				rows := 0
				for {
					err := r.Next(&tr)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if tr.Weight != nil {
						t.Fatalf("line %d: unexpected weight", r.Line())
					}
					if rows == 0 && tr.Source == "" {
						t.Fatal("empty source")
					}
					rows++
				}
				rc.Close()
				if r.Format() != TSV || rows != c.rows || r.Line() != c.rows {
					t.Fatalf("format %v, %d rows (last line %d), want TSV and %d", r.Format(), rows, r.Line(), c.rows)
				}
			}
		})
	}
}

package tripletio

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
)

// OpenFile opens an import file with the CLI's conventions: "-" is standard
// input (which Close leaves open, since the process owns it), and a name
// ending in ".gz" is decompressed. The caller must Close the result.
//
// NewReader detects gzip by content anyway, so a compressed standard input
// or a misnamed file still works; the extension matters for callers that
// read the file without a Reader.
func OpenFile(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tripletio: %w", err)
	}
	if !strings.HasSuffix(strings.ToLower(path), ".gz") {
		return f, nil
	}
	gz, err := gzip.NewReader(bufio.NewReaderSize(f, bufSize))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tripletio: %s: gzip: %w", path, err)
	}
	return &gzipFile{Reader: gz, f: f}, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g *gzipFile) Close() error {
	err := g.Reader.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}

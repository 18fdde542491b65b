package tripletio

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format is an input format. The zero value, Auto, sniffs the input.
type Format int

const (
	// Auto detects the format from the first bytes of the (decompressed)
	// input: '[' is a JSON array, '{' is JSONL, otherwise the first data
	// line decides: a tab makes it TSV, a leading '<' or "_:" N-Triples,
	// two '|' SPO, a comma or a leading quote CSV.
	Auto Format = iota
	// JSON is one JSON array of triplet objects.
	JSON
	// JSONL is NDJSON: one triplet object per line.
	JSONL
	// TSV is tab-separated source, relationship, target[, weight].
	TSV
	// CSV is comma-separated source, relationship, target[, weight] with
	// encoding/csv quoting.
	CSV
	// SPO is the extractor's SUBJECT|PREDICATE|OBJECT lines (an optional
	// fourth field is a weight).
	SPO
	// NTriples is W3C N-Triples: <s> <p> <o> . with IRIs shortened to their
	// last path segment or fragment for names (the full IRI kept as an
	// alias), literal objects as names.
	NTriples
)

var formatNames = [...]string{Auto: "auto", JSON: "json", JSONL: "jsonl", TSV: "tsv", CSV: "csv", SPO: "spo", NTriples: "nt"}

// String returns the name ParseFormat accepts for f.
func (f Format) String() string {
	if f < 0 || int(f) >= len(formatNames) {
		return fmt.Sprintf("Format(%d)", int(f))
	}
	return formatNames[f]
}

func (f Format) valid() bool { return f >= Auto && f <= NTriples }

// ParseFormat parses a --format flag value: "auto", "json", "jsonl" or
// "ndjson", "tsv", "csv", in any case. The empty string is Auto, so an unset
// flag means "detect".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "json":
		return JSON, nil
	case "jsonl", "ndjson":
		return JSONL, nil
	case "tsv":
		return TSV, nil
	case "csv":
		return CSV, nil
	case "spo", "pipe":
		return SPO, nil
	case "nt", "ntriples", "n-triples":
		return NTriples, nil
	}
	return Auto, fmt.Errorf("%w %q (want auto, json, jsonl, ndjson, tsv, csv, spo or nt)", ErrUnknownFormat, s)
}

// FormatFromPath guesses the format from a file name's extension, ignoring a
// trailing ".gz": .json, .jsonl/.ndjson, .tsv/.txt, .csv. Anything else,
// including "-", is Auto. The CLI uses it as a hint; content sniffing stays
// the authority for Auto.
func FormatFromPath(path string) Format {
	p := strings.ToLower(path)
	p = strings.TrimSuffix(p, ".gz")
	switch filepath.Ext(p) {
	case ".json":
		return JSON
	case ".jsonl", ".ndjson":
		return JSONL
	case ".tsv", ".txt":
		return TSV
	case ".csv":
		return CSV
	case ".nt":
		return NTriples
	case ".spo":
		return SPO
	}
	return Auto
}

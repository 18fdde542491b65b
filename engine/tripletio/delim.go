package tripletio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kgctx/kgctx/engine/model"
)

// nextTSV decodes the next data row of a TSV input. TSV has no quoting: a
// field is everything between two tabs, so a row costs one string
// allocation (the row) plus one for a weight.
func (r *Reader) nextTSV(t *model.TripletInput) error {
	for {
		line, _, err := r.lines.next()
		if err != nil {
			return r.readFailed(err)
		}
		if isSpaceBytes(line) || line[0] == '#' {
			continue
		}
		r.line = r.lines.n

		n := bytes.Count(line, tab) + 1
		if !r.sawData {
			r.sawData = true
			if n >= 3 && isHeaderBytes(line) {
				continue
			}
		}
		if n < 3 || n > 4 {
			return r.fail(r.line, fieldCountError("tab-separated", n), false)
		}
		s := string(line)
		i := strings.IndexByte(s, '\t')
		t.Source, s = s[:i], s[i+1:]
		i = strings.IndexByte(s, '\t')
		t.Relationship, s = s[:i], s[i+1:]
		if i = strings.IndexByte(s, '\t'); i >= 0 {
			t.Target, s = s[:i], s[i+1:]
			if t.Weight, err = parseWeight(s); err != nil {
				return r.fail(r.line, err, false)
			}
		} else {
			t.Target = s
		}
		if err := checkRequired(t); err != nil {
			return r.fail(r.line, err, false)
		}
		return nil
	}
}

var tab = []byte{'\t'}

// isHeaderBytes reports whether a TSV row starts with the cells source,
// relationship, target in any case, the header a spreadsheet export has.
func isHeaderBytes(line []byte) bool {
	for _, want := range headerCells {
		cell := line
		if i := bytes.IndexByte(line, '\t'); i >= 0 {
			cell, line = line[:i], line[i+1:]
		} else {
			line = nil
		}
		if !strings.EqualFold(string(bytes.TrimSpace(cell)), want) {
			return false
		}
	}
	return true
}

var headerCells = [3]string{"source", "relationship", "target"}

func fieldCountError(kind string, n int) error {
	return detail(ErrInvalidRecord, fmt.Sprintf("expected 3 or 4 %s fields (source, relationship, target[, weight]), got %d", kind, n))
}

// parseWeight parses the optional fourth column. Unlike JSON input, whose
// weight range is left to model.ValidateTriplet, a bad weight cell is
// rejected here: in a column format a stray value usually means the columns
// are shifted.
func parseWeight(s string) (*float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	w, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(w) || w < 0 || w > 1 {
		return nil, detail(ErrInvalidWeight, fmt.Sprintf("invalid weight %q: want a number in [0,1]", s))
	}
	return &w, nil
}

// nextCSV decodes the next CSV record. The parser follows encoding/csv with
// Comma ',', no comment character, FieldsPerRecord -1 and LazyQuotes false
// (the fuzz test checks it against encoding/csv), but it reads through the
// bounded lineReader, allocates one string per record and can go on after a
// bad record. A record whose only field is white space counts as blank.
func (r *Reader) nextCSV(t *model.TripletInput) error {
	for {
		s, err := r.csvRecord()
		if err != nil {
			return err
		}
		n := len(r.ends)
		if n == 1 && isBlank(s) {
			continue
		}
		if !r.sawData {
			r.sawData = true
			if n >= 3 && r.isHeaderCSV(s) {
				continue
			}
		}
		if n < 3 || n > 4 {
			return r.fail(r.line, fieldCountError("comma-separated", n), false)
		}
		t.Source = s[:r.ends[0]]
		t.Relationship = s[r.ends[0]:r.ends[1]]
		t.Target = s[r.ends[1]:r.ends[2]]
		if n == 4 {
			if t.Weight, err = parseWeight(s[r.ends[2]:r.ends[3]]); err != nil {
				return r.fail(r.line, err, false)
			}
		}
		if err := checkRequired(t); err != nil {
			return r.fail(r.line, err, false)
		}
		return nil
	}
}

func (r *Reader) isHeaderCSV(s string) bool {
	start := 0
	for i, want := range headerCells {
		if !strings.EqualFold(strings.TrimSpace(s[start:r.ends[i]]), want) {
			return false
		}
		start = r.ends[i]
	}
	return true
}

// csvRecord reads one record, skipping empty lines, into r.rec and r.ends
// and returns the fields' bytes as one string (field i is s[ends[i-1]:ends[i]]).
// It sets r.line to the record's first line.
func (r *Reader) csvRecord() (string, error) {
	var line []byte
	var nl bool
	var err error
	for {
		line, nl, err = r.lines.next()
		if err != nil {
			return "", r.readFailed(err)
		}
		if len(line) > 0 {
			break
		}
	}
	r.line = r.lines.n
	r.rec, r.ends = r.rec[:0], r.ends[:0]

field:
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, ',')
			f := line
			if i >= 0 {
				f = line[:i]
			}
			if bytes.IndexByte(f, '"') >= 0 {
				return "", r.fail(r.line, detail(ErrSyntax, `bare " in non-quoted field`), false)
			}
			r.rec = append(r.rec, f...)
			r.ends = append(r.ends, len(r.rec))
			if i < 0 {
				break field
			}
			line = line[i+1:]
			continue
		}
		line = line[1:]
		for {
			i := bytes.IndexByte(line, '"')
			if i < 0 {
				// The quoted field goes on past this physical line.
				r.rec = append(r.rec, line...)
				if !nl {
					return "", r.fail(r.line, detail(ErrSyntax, `quoted field not terminated at end of input`), false)
				}
				r.rec = append(r.rec, '\n')
				if len(r.rec) > r.opts.MaxLineBytes {
					// Resuming mid-field would misparse the rest of
					// the file: stop.
					return "", r.fail(r.line, detail(ErrLineTooLong, fmt.Sprintf("record longer than %d bytes", r.opts.MaxLineBytes)), true)
				}
				line, nl, err = r.lines.next()
				switch {
				case err == io.EOF:
					return "", r.fail(r.line, detail(ErrSyntax, `quoted field not terminated at end of input`), false)
				case errors.Is(err, ErrLineTooLong):
					return "", r.fail(r.line, err, true) // as above
				case err != nil:
					return "", r.readFailed(err)
				}
				continue
			}
			r.rec = append(r.rec, line[:i]...)
			line = line[i+1:]
			switch {
			case len(line) > 0 && line[0] == '"':
				r.rec = append(r.rec, '"')
				line = line[1:]
			case len(line) > 0 && line[0] == ',':
				r.ends = append(r.ends, len(r.rec))
				line = line[1:]
				continue field
			case len(line) == 0:
				r.ends = append(r.ends, len(r.rec))
				break field
			default:
				return "", r.fail(r.line, detail(ErrSyntax, `extraneous or missing " in quoted field`), false)
			}
		}
	}
	if len(r.rec) > r.opts.MaxLineBytes {
		return "", r.fail(r.line, detail(ErrLineTooLong, fmt.Sprintf("record longer than %d bytes", r.opts.MaxLineBytes)), false)
	}
	return string(r.rec), nil
}

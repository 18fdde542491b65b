package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestREADMESession runs the README's walkthrough as a newcomer does,
// against the real binary: the shell blocks from "Five minutes with curl"
// to the CLI (the curl session, session memory, looking memory up,
// delivery, extractors, the CLI), in order, in one bash, against a server
// started the way the set-up says. Each command's shown output (the
// "# ..." lines after it, or the ```json block after a block) is
// compared with what the run printed, by shape: every "key":value it
// shows (ids, times and durations by presence only), the number of
// elements of a listed array, the lines of each section of a block, the
// header and rows of a table, an HTTP status. So the README cannot drift
// from what kgctx prints. It needs bash and curl (skipped without them).
func TestREADMESession(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server and runs the README")
	}
	for _, tool := range []string{"bash", "curl", "sed", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := readmeSteps(t, string(readme), "## Five minutes with curl", "## Indexing a Go module")
	if len(steps) < 20 {
		t.Fatalf("only %d commands with shown outputs found in the README", len(steps))
	}
	work := t.TempDir()
	data := filepath.Join(work, "kgctx-data")
	s := startServe(t, data)
	defer func() {
		if s.cmd.ProcessState == nil {
			s.stop()
		}
	}()

	// One bash runs every block in order; a marker line before each shown
	// output splits what the commands printed.
	var script strings.Builder
	script.WriteString("set -u\n")
	for i, st := range steps {
		if st.stopServer {
			fmt.Fprintf(&script, "echo '@@STOP %d@@'\nread -r _\n", i)
		}
		script.WriteString(rewriteREADME(st.code, s.url, binary))
		fmt.Fprintf(&script, "\necho; echo '@@MARK %d@@'\n", i)
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "KGCTX_ADMIN_TOKEN=", "TMPDIR="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, len(steps))
	var cur strings.Builder
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	markRE := regexp.MustCompile(`^@@(MARK|STOP) (\d+)@@$`)
	for sc.Scan() {
		line := sc.Text()
		if m := markRE.FindStringSubmatch(line); m != nil {
			i, _ := strconv.Atoi(m[2])
			if m[1] == "STOP" {
				// The README stops the server (Ctrl-C) before the CLI
				// uses the data directory offline.
				s.stop()
				fmt.Fprintln(stdin)
				continue
			}
			outputs[i] = cur.String()
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Logf("bash: %v", err)
	}
	if t.Failed() {
		return
	}
	for i, st := range steps {
		if err := st.check(outputs[i]); err != nil {
			t.Errorf("README line %d: %s\n  shown:   %s\n  printed: %s\n  error: %v", st.line, firstLine(st.code),
				strings.Join(st.shown, "\n           "), strings.TrimSpace(outputs[i]), err)
		}
	}
	if t.Failed() {
		t.Logf("bash stderr:\n%s", stderr.String())
	}
	// The walkthrough leaves the tree clean: everything it writes is in
	// the data directory, ./kgctx or a temporary folder.
	entries, _ := os.ReadDir(work)
	for _, e := range entries {
		if e.Name() != "kgctx-data" && e.Name() != "kgctx" {
			t.Errorf("the README's commands left %s in the working directory", e.Name())
		}
	}
}

// readmeStep is a run of commands and the output the README shows after
// them.
type readmeStep struct {
	line       int      // README line of the first command
	code       string   // the commands
	shown      []string // the shown output, without "# "
	inline     string   // an inline "# NNN" after a command printing an HTTP status
	stopServer bool     // the README stops the server before this step
}

// readmeSteps cuts the shell blocks between the headings from and to into
// steps: commands up to a run of "# " lines (their shown output), or up to
// the end of a block, whose shown output is then a ```json block that
// follows it, if any.
func readmeSteps(t *testing.T, readme, from, to string) []readmeStep {
	lines := strings.Split(readme, "\n")
	var steps []readmeStep
	in, fence, stopNext := false, "", false
	var cur *readmeStep
	var code []string
	flush := func(shown []string) {
		if len(code) == 0 {
			return
		}
		st := readmeStep{line: cur.line, code: strings.Join(code, "\n"), shown: shown, stopServer: cur.stopServer}
		if m := regexp.MustCompile(`%\{http_code\}.*#\s*(\d{3})\s*$`).FindStringSubmatch(st.code); m != nil {
			st.inline = m[1]
		}
		steps = append(steps, st)
		code = nil
		cur = nil
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, from):
			in = true
			continue
		case strings.HasPrefix(l, to):
			in = false
		}
		if !in {
			continue
		}
		if fence == "" {
			if strings.HasPrefix(l, "Stop the server") {
				stopNext = true
			}
			if strings.HasPrefix(l, "```") {
				fence = strings.TrimPrefix(l, "```")
				if fence == "" {
					fence = "text"
				}
			}
			continue
		}
		if strings.HasPrefix(l, "```") {
			if fence == "sh" {
				// A block's last commands: their output may be the json
				// block shown next.
				var shown []string
				for j := i + 1; j < len(lines) && j < i+6; j++ {
					if strings.HasPrefix(lines[j], "```json") {
						for k := j + 1; k < len(lines) && !strings.HasPrefix(lines[k], "```"); k++ {
							shown = append(shown, lines[k])
						}
						break
					}
					if strings.HasPrefix(lines[j], "```") {
						break
					}
				}
				flush(shown)
			}
			fence = ""
			continue
		}
		if fence != "sh" {
			continue
		}
		if strings.HasPrefix(l, "#") && len(code) > 0 && !strings.HasPrefix(strings.TrimSpace(code[len(code)-1]), "<<") {
			var shown []string
			for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
				shown = append(shown, strings.TrimPrefix(strings.TrimPrefix(lines[i], "#"), " "))
			}
			i--
			flush(shown)
			continue
		}
		if cur == nil {
			cur = &readmeStep{line: i + 1, stopServer: stopNext}
			stopNext = false
		}
		code = append(code, l)
	}
	return steps
}

// rewriteREADME points a README command at the test's server and binary.
func rewriteREADME(code, url, bin string) string {
	code = strings.ReplaceAll(code, "http://127.0.0.1:7070", url)
	code = strings.ReplaceAll(code, "go build -o kgctx ./cmd/kgctx", "cp "+bin+" kgctx")
	code = strings.ReplaceAll(code, "go run ./cmd/kgctx", bin)
	return code
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

var (
	pairRE  = regexp.MustCompile(`"(\w+)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:e-?\d+)?|true|false|null)`)
	arrayRE = regexp.MustCompile(`"(\w+)"\s*:\s*\[((?:"(?:[^"\\]|\\.)*"\s*,?\s*)+)\]`)
	// generated ids, times and durations: shown by presence only
	genRE = regexp.MustCompile(`\b(obs|dlv|log|tok|ses|kgx)_[A-Za-z0-9_-]{6,}\b|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{8}-\.\.\.`)
)

// presenceOnly are keys whose values differ from run to run.
func presenceOnly(key string) bool {
	for _, s := range []string{"Ms", "At", "Cursor", "timestamp", "updated", "created", "score", "relevance", "relevanceScore"} {
		if strings.HasSuffix(key, s) || key == s {
			return true
		}
	}
	return key == "id" || key == "token" || key == "deliveryId" || key == "logId" || strings.HasSuffix(key, "Id")
}

// check compares what a step printed with what the README shows.
func (st readmeStep) check(printed string) error {
	printed = strings.TrimSpace(printed)
	if st.inline != "" && !strings.Contains(printed, st.inline) {
		return fmt.Errorf("want status %s", st.inline)
	}
	errAnswer := regexp.MustCompile(`(?m)^\{"error":\{`).MatchString(printed)
	if len(st.shown) == 0 {
		if errAnswer {
			return fmt.Errorf("an error answer where the README shows none")
		}
		return nil
	}
	shown := strings.Join(st.shown, "\n")
	pairs := pairRE.FindAllStringSubmatch(shown, -1)
	if len(pairs) == 0 {
		if isTable(st.shown) {
			return checkTable(st.shown, printed)
		}
		return nil // a sentence about the output, not the output
	}
	if errAnswer && !strings.Contains(shown, `"error"`) {
		return fmt.Errorf("an error answer")
	}
	var vals []any
	for _, l := range strings.Split(printed, "\n") {
		var v any
		if json.Unmarshal([]byte(strings.TrimSpace(l)), &v) == nil {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		var v any
		if json.Unmarshal([]byte(printed), &v) != nil {
			return fmt.Errorf("the output is not JSON")
		}
		vals = append(vals, v)
	}
	for _, p := range pairs {
		key, raw := p[1], p[2]
		found := values(vals, key)
		if len(found) == 0 {
			return fmt.Errorf("no %q in the output", key)
		}
		if presenceOnly(key) {
			continue
		}
		var want any
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			return fmt.Errorf("shown %s: %v", p[0], err)
		}
		ok := false
		for _, got := range found {
			if sameShape(want, got) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%q: shown %s, printed %v", key, raw, found)
		}
	}
	for _, a := range arrayRE.FindAllStringSubmatch(shown, -1) {
		n := strings.Count(a[2], `"`) / 2
		if strings.Contains(a[2], "...") {
			continue
		}
		ok := false
		var lens []int
		for _, got := range values(vals, a[1]) {
			if arr, isArr := got.([]any); isArr {
				lens = append(lens, len(arr))
				ok = ok || len(arr) == n
			}
		}
		if !ok {
			return fmt.Errorf("%q: shown %d elements, printed %v", a[1], n, lens)
		}
	}
	return nil
}

// values are the values of key in any object of vs, at any depth.
func values(vs []any, key string) []any {
	var out []any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == key {
					out = append(out, e)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, v := range vs {
		walk(v)
	}
	return out
}

// sameShape compares a shown value with a printed one: numbers by value,
// strings with generated ids masked and "..." standing for anything, and
// a block (markdown) section by section: the lines shown appear in
// order, and a section shown without "..." has as many lines as printed.
func sameShape(want, got any) bool {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		return ok && math.Abs(w-g) < 1e-9
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		w, g = genRE.ReplaceAllString(w, "ID"), genRE.ReplaceAllString(g, "ID")
		if strings.Contains(w, "\n") || strings.HasPrefix(w, "## ") {
			return sameBlock(w, g)
		}
		return wildcard(w, g)
	}
	return want == got
}

// wildcard matches g against w where "..." in w stands for anything.
func wildcard(w, g string) bool {
	parts := strings.Split(w, "...")
	if len(parts) == 1 {
		return w == g
	}
	if !strings.HasPrefix(g, parts[0]) {
		return false
	}
	g = g[len(parts[0]):]
	for _, p := range parts[1:] {
		i := strings.Index(g, p)
		if i < 0 {
			return false
		}
		g = g[i+len(p):]
	}
	return true
}

func sameBlock(w, g string) bool {
	ws, gs := sections(w), sections(g)
	for head, wl := range ws {
		gl, ok := gs[head]
		if !ok {
			return false
		}
		open := false
		j := 0
		for _, l := range wl {
			if strings.Contains(l, "...") {
				open = true
				if l = strings.TrimSpace(strings.ReplaceAll(l, "...", "")); l == "" {
					continue
				}
			}
			for j < len(gl) && !wildcard(l, gl[j]) && !strings.HasPrefix(gl[j], l) {
				j++
			}
			if j == len(gl) {
				return false
			}
			j++
		}
		if !open && len(wl) != len(gl) {
			return false
		}
	}
	return true
}

// sections splits a block into its "## " sections' lines.
func sections(b string) map[string][]string {
	out := map[string][]string{}
	head := ""
	for _, l := range strings.Split(b, "\n") {
		if strings.HasPrefix(l, "## ") {
			head = l
			out[head] = []string{}
			continue
		}
		if strings.TrimSpace(l) != "" {
			out[head] = append(out[head], l)
		}
	}
	return out
}

// isTable reports whether shown lines are a CLI table: a header of
// upper-case words.
func isTable(shown []string) bool {
	return len(shown) > 0 && regexp.MustCompile(`^[A-Z][A-Z ]+[A-Z]$`).MatchString(strings.TrimSpace(shown[0]))
}

// checkTable compares a table's header (words) and its number of rows.
func checkTable(shown []string, printed string) error {
	lines := strings.Split(printed, "\n")
	if strings.Join(strings.Fields(lines[0]), " ") != strings.Join(strings.Fields(shown[0]), " ") {
		return fmt.Errorf("header %q, shown %q", lines[0], shown[0])
	}
	if len(lines) != len(shown) {
		return fmt.Errorf("%d rows printed, %d shown", len(lines)-1, len(shown)-1)
	}
	return nil
}

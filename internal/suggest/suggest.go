// Package suggest finds the name a typo probably meant: the CLI's unknown
// commands and flags, the API's unknown JSON fields. It sits in internal,
// below every other folder, so both can share it.
package suggest

import (
	"reflect"
	"sort"
	"strings"
)

// Nearest returns the candidate nearest to got by Distance, compared
// case-insensitively, when it is close enough to be a likely typo: at
// most a third of got's length (and at least one edit) away. Ties go to
// the first in sorted order. "" when none is close.
func Nearest(got string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestD := "", -1
	for _, c := range sorted {
		if d := Distance(strings.ToLower(got), strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(1, len(got)/3)
	if best == "" || bestD > limit || bestD >= len(got) {
		return ""
	}
	return best
}

// Distance is the Levenshtein distance between a and b, by bytes (names
// are ASCII), with adjacent transpositions counting as one edit ("improt"
// is one typo away from "import").
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// jsonField is a JSON field of a type: its name and its dotted path.
type jsonField struct{ name, path string }

// jsonFields lists the JSON fields of v's type, breadth first (shallowest
// first), through pointers, slices, arrays and maps, four levels deep at
// most: no request body is deeper, and a type that holds itself ends
// there.
func jsonFields(v any) []jsonField {
	var out []jsonField
	type level struct {
		t      reflect.Type
		prefix string
		depth  int
	}
	queue := []level{{reflect.TypeOf(v), "", 0}}
	for len(queue) > 0 {
		l := queue[0]
		queue = queue[1:]
		t := l.t
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct || l.depth > 4 {
			continue
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch tag {
			case "-":
				continue
			case "":
				tag = f.Name
			}
			out = append(out, jsonField{tag, l.prefix + tag})
			queue = append(queue, level{f.Type, l.prefix + tag + ".", l.depth + 1})
		}
	}
	return out
}

// Field returns the JSON field of v's type (at any depth) nearest
// to name: one it starts, or one within two edits; "" when none is close.
// Shallower fields win ties.
func Field(name string, v any) string {
	best, bestD := "", 3
	lower := strings.ToLower(name)
	for _, f := range jsonFields(v) {
		ln := strings.ToLower(f.name)
		if len(lower) >= 3 && strings.HasPrefix(ln, lower) {
			return f.name
		}
		if d := Distance(lower, ln); d < bestD {
			best, bestD = f.name, d
		}
	}
	return best
}

// Paths returns the dotted JSON paths, shallowest first and at most
// three, at which v's type has a field named exactly name below its top
// level ("identity.orgId"): where a field given at the wrong level
// belongs. Slices and maps are walked through ("items.name").
func Paths(name string, v any) []string {
	var out []string
	for _, f := range jsonFields(v) {
		if f.name == name && f.path != name && len(out) < 3 {
			out = append(out, f.path)
		}
	}
	return out
}

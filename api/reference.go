package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Reference renders the API reference the repository keeps in
// docs/api.md: every route of the route table with its role, query
// parameters, body, answers and errors, then every body type's fields,
// all read from the OpenAPI document (so the three cannot disagree). A
// test fails when the file is stale; `go test ./api -run TestAPIReference
// -update` writes it.
func (s *Server) Reference() string {
	doc := s.openAPI("http://127.0.0.1:7070")
	// Round-trip through JSON: plain maps and slices from here on.
	raw, err := json.Marshal(doc)
	if err != nil {
		panic("BUG: the OpenAPI document does not encode: " + err.Error())
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		panic("BUG: " + err.Error())
	}
	var b strings.Builder
	b.WriteString("# kgctx HTTP API reference\n\n")
	b.WriteString("Generated from the server's route table (`go test ./api -run TestAPIReference -update`); do not edit by hand.\n")
	b.WriteString("The same content, machine-readable, is `GET /openapi.json` on a running server.\n\n")
	b.WriteString("Every route but `/healthz` needs `Authorization: Bearer <token>`; the token decides the org (a path or body naming\n")
	b.WriteString("another org is 403, operators excepted). Bodies are JSON unless a route says otherwise. Errors are\n")
	b.WriteString("`{\"error\": {\"code\", \"message\", \"lines\"?}}`; a write answered 4xx or 5xx changed nothing, but for 504\n")
	b.WriteString("`outcome_unknown` (a cluster's write that may or may not take effect). In a cluster a write may carry `Idempotency-Key`:\n")
	b.WriteString("a retry with the same key (same caller, within 24 hours) is applied at most once, answered with `Idempotent-Replayed:\n")
	b.WriteString("true`; a single node accepts the key (its writes never end unknown) and applies every request.\n")
	b.WriteString("While a search index is behind the store (it failed to apply a stored write), every answer carries\n" +
		"`Warning: " + indexBehindWarning + "`; the write itself is answered as usual.\n\n")

	paths, _ := d["paths"].(map[string]any)
	type op struct {
		method, path, tag string
		v                 map[string]any
	}
	var ops []op
	for p, item := range paths {
		for m, v := range item.(map[string]any) {
			o := v.(map[string]any)
			tag := ""
			if ts, ok := o["tags"].([]any); ok && len(ts) > 0 {
				tag, _ = ts[0].(string)
			}
			ops = append(ops, op{strings.ToUpper(m), p, tag, o})
		}
	}
	order := map[string]int{}
	for i, t := range tags {
		order[t.name] = i
	}
	sort.SliceStable(ops, func(i, j int) bool {
		if order[ops[i].tag] != order[ops[j].tag] {
			return order[ops[i].tag] < order[ops[j].tag]
		}
		if ops[i].path != ops[j].path {
			return ops[i].path < ops[j].path
		}
		return ops[i].method < ops[j].method
	})
	b.WriteString("## Routes\n\n| method | path | role | what |\n|---|---|---|---|\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", o.method, o.path, role(o.v), cell(str(o.v["summary"])))
	}
	errDocs := map[string]string{}
	if comps, ok := d["components"].(map[string]any); ok {
		if rs, ok := comps["responses"].(map[string]any); ok {
			for k, v := range rs {
				errDocs[strings.TrimPrefix(k, "E")] = str(v.(map[string]any)["description"])
			}
		}
	}
	tag := ""
	for _, o := range ops {
		if o.tag != tag {
			tag = o.tag
			for _, t := range tags {
				if t.name == tag {
					fmt.Fprintf(&b, "\n## %s\n\n%s\n", strings.ToUpper(tag[:1])+tag[1:], t.doc)
				}
			}
		}
		fmt.Fprintf(&b, "\n### %s %s\n\n%s\n\n", o.method, o.path, str(o.v["summary"]))
		fmt.Fprintf(&b, "- Role: %s\n", role(o.v))
		if ps, ok := o.v["parameters"].([]any); ok {
			for _, p := range ps {
				pm := p.(map[string]any)
				if pm["in"] != "query" {
					continue
				}
				req := ""
				if pm["required"] == true {
					req = ", required"
				}
				fmt.Fprintf(&b, "- Query `%s` (%s%s): %s\n", str(pm["name"]), str(pm["schema"].(map[string]any)["type"]), req, str(pm["description"]))
			}
		}
		if rb, ok := o.v["requestBody"].(map[string]any); ok {
			fmt.Fprintf(&b, "- Body: %s\n", contentDoc(rb["content"]))
		}
		resps, _ := o.v["responses"].(map[string]any)
		codes := make([]string, 0, len(resps))
		for c := range resps {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		var errs []string
		for _, c := range codes {
			r := resps[c].(map[string]any)
			if _, isErr := r["$ref"]; isErr {
				errs = append(errs, c)
				continue
			}
			what := str(r["description"])
			if ct, ok := r["content"]; ok {
				what = contentDoc(ct)
			}
			fmt.Fprintf(&b, "- %s: %s\n", c, what)
		}
		if len(errs) > 0 {
			fmt.Fprintf(&b, "- Errors: %s\n", strings.Join(errs, ", "))
		}
	}
	b.WriteString("\n## Error statuses\n\n| status | when |\n|---|---|\n")
	var sts []int
	for k := range errDocs {
		n, _ := strconv.Atoi(k)
		sts = append(sts, n)
	}
	slices.Sort(sts)
	for _, st := range sts {
		fmt.Fprintf(&b, "| %d | %s |\n", st, cell(errDocs[strconv.Itoa(st)]))
	}
	b.WriteString("\n## Types\n\nThe fields of every body, as JSON; \"required\" marks a field a request must send.\n")
	schemas, _ := d["components"].(map[string]any)["schemas"].(map[string]any)
	names := make([]string, 0, len(schemas))
	for n := range schemas {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		sc := schemas[n].(map[string]any)
		fmt.Fprintf(&b, "\n### %s\n\n", n)
		props, _ := sc["properties"].(map[string]any)
		if len(props) == 0 {
			fmt.Fprintf(&b, "%s\n", typeDoc(sc))
			continue
		}
		req := map[string]bool{}
		if rs, ok := sc["required"].([]any); ok {
			for _, r := range rs {
				req[str(r)] = true
			}
		}
		fields := make([]string, 0, len(props))
		for f := range props {
			fields = append(fields, f)
		}
		slices.Sort(fields)
		b.WriteString("| field | type | |\n|---|---|---|\n")
		for _, f := range fields {
			mark := ""
			if req[f] {
				mark = "required"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f, cell(typeDoc(props[f].(map[string]any))), mark)
		}
	}
	return b.String()
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// cell makes text safe in a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// role is the least role of an operation ("none" for no token).
func role(op map[string]any) string {
	d := str(op["description"])
	if r, ok := strings.CutPrefix(d, "Needs the "); ok {
		r, _, _ = strings.Cut(r, " ")
		return r + " or above"
	}
	return "none (no token)"
}

// contentDoc names the media types of a content map and their schemas.
func contentDoc(c any) string {
	cm, _ := c.(map[string]any)
	types := make([]string, 0, len(cm))
	for t := range cm {
		types = append(types, t)
	}
	slices.Sort(types)
	var parts []string
	for _, t := range types {
		sc, _ := cm[t].(map[string]any)["schema"].(map[string]any)
		part := "`" + t + "`"
		if sc != nil {
			part += " " + typeDoc(sc)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// typeDoc is a schema as a short type: a linked type name, string,
// [items], {string: value}, with an enum's values.
func typeDoc(sc map[string]any) string {
	if ref := str(sc["$ref"]); ref != "" {
		n := ref[strings.LastIndexByte(ref, '/')+1:]
		return "[" + n + "](#" + strings.ToLower(n) + ")"
	}
	if all, ok := sc["allOf"].([]any); ok && len(all) == 1 {
		return typeDoc(all[0].(map[string]any))
	}
	t := str(sc["type"])
	switch t {
	case "array":
		if it, ok := sc["items"].(map[string]any); ok {
			return "[" + typeDoc(it) + "]"
		}
	case "object":
		if ap, ok := sc["additionalProperties"].(map[string]any); ok {
			return "{string: " + typeDoc(ap) + "}"
		}
	}
	if f := str(sc["format"]); f != "" {
		t += " (" + f + ")"
	}
	if e, ok := sc["enum"].([]any); ok {
		var vs []string
		for _, v := range e {
			vs = append(vs, fmt.Sprint(v))
		}
		t += ": " + strings.Join(vs, ", ")
	}
	if t == "" {
		t = "any"
	}
	if sc["nullable"] == true {
		t += ", nullable"
	}
	return t
}

package api

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// schemaGen derives OpenAPI 3.0 schemas from Go types by reflection, the
// way encoding/json sees them: the request and response types of the
// handlers are the one source of truth of the document.
//
// A named struct becomes a component (its Go name, capitalised; the
// package name is prefixed when two packages use one name) and is
// referenced; anonymous structs are inlined. Field names, "-" and
// omitempty come from the json tag. Objects are closed
// (additionalProperties false), as the server refuses unknown fields. Nil
// slices, maps and pointers encode as null, so they are nullable. An
// `oas` tag adds what a type cannot say, comma-separated: required,
// enum=a|b, default=V, min=N, max=N, format=F.
type schemaGen struct {
	comps map[string]any
	names map[reflect.Type]string
	taken map[string]reflect.Type
}

func newSchemaGen() *schemaGen {
	return &schemaGen{comps: map[string]any{}, names: map[reflect.Type]string{}, taken: map[string]reflect.Type{}}
}

var timeType = reflect.TypeFor[time.Time]()
var rawType = reflect.TypeFor[json.RawMessage]()

// schema is the schema of t (a $ref for named structs).
func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == rawType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := g.schema(t.Elem())
		if _, isRef := s["$ref"]; isRef {
			// OpenAPI 3.0 ignores a $ref's siblings.
			return map[string]any{"type": "object", "allOf": []any{s}, "nullable": true}
		}
		s["nullable"] = true
		return s
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + g.component(t)}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		s := map[string]any{"type": "array", "items": g.schema(t.Elem())}
		if t.Kind() == reflect.Slice {
			s["nullable"] = true
		}
		return s
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem()), "nullable": true}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Interface:
		// Any JSON value (OpenAPI 3.0 cannot say "any, or null").
		return map[string]any{}
	}
	panic("api: no OpenAPI schema for " + t.String())
}

// schemaRefiner is a body type that adds what its fields' types cannot say
// (bounds and defaults from constants) to its properties.
type schemaRefiner interface{ refineSchema(props map[string]any) }

// bound sets the minimum, maximum and default of an integer property.
func bound(props map[string]any, name string, lo, hi, def int) {
	s := props[name].(map[string]any)
	s["minimum"], s["maximum"], s["default"] = lo, hi, def
}

// component registers the named struct t and returns its component name.
func (g *schemaGen) component(t reflect.Type) string {
	if n, ok := g.names[t]; ok {
		return n
	}
	name := exportName(t.Name())
	if other, ok := g.taken[name]; ok && other != t {
		name = exportName(pkgName(t)) + name
	}
	g.names[t], g.taken[name] = name, t
	g.comps[name] = nil // a recursive type finds its name
	g.comps[name] = g.object(t)
	return name
}

func pkgName(t reflect.Type) string {
	p := t.PkgPath()
	return p[strings.LastIndex(p, "/")+1:]
}

// exportName capitalises a Go name and drops a JSON suffix of wire types
// (identityJSON -> Identity).
func exportName(n string) string {
	n = strings.TrimSuffix(n, "JSON")
	r := []rune(n)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// object is the schema of struct t's fields, embedded structs inlined.
func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	if r, ok := reflect.Zero(t).Interface().(schemaRefiner); ok {
		r.refineSchema(props)
	}
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		o["required"] = required
	}
	return o
}

func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.fields(ft, props, required)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := g.schema(f.Type)
		for _, opt := range strings.Split(f.Tag.Get("oas"), ",") {
			k, v, _ := strings.Cut(opt, "=")
			switch k {
			case "":
			case "required":
				*required = append(*required, name)
			case "enum":
				var vals []any
				for _, e := range strings.Split(v, "|") {
					vals = append(vals, e)
				}
				s["enum"] = vals
			case "format":
				s["format"] = v
			case "default", "min", "max":
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					panic("api: oas tag " + opt + " of " + t.String() + "." + f.Name)
				}
				s[map[string]string{"default": "default", "min": "minimum", "max": "maximum"}[k]] = n
			default:
				panic("api: unknown oas tag " + opt + " of " + t.String() + "." + f.Name)
			}
		}
		props[name] = s
	}
}

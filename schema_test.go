package livecheck_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/systems"
)

// readSchema reads docs/check.schema.json.
func readSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("docs/check.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("docs/check.schema.json: %v", err)
	}
	return s
}

// resolve follows a schema's $ref ("#/$defs/NAME") within root.
func resolve(t *testing.T, root, s map[string]any) map[string]any {
	ref, ok := s["$ref"].(string)
	if !ok {
		return s
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	def, _ := root["$defs"].(map[string]any)[name].(map[string]any)
	if !ok || def == nil {
		t.Fatalf("$ref %q names no definition", ref)
	}
	return def
}

// schemaKeywords are those validate knows; a schema that uses another
// fails the test rather than pass unchecked.
var schemaKeywords = []string{"$schema", "$id", "$defs", "$ref", "title", "description",
	"type", "const", "enum", "required", "properties", "additionalProperties", "items"}

// validate checks value v (as encoding/json decodes it) against schema s,
// for the part of JSON Schema that docs/check.schema.json uses, and
// returns the errors, each with the JSON path of the value.
func validate(t *testing.T, root, s map[string]any, v any, at string) []string {
	for k := range s {
		if !slices.Contains(schemaKeywords, k) {
			t.Fatalf("%s: the schema uses %q, which the test's validator does not know", at, k)
		}
	}
	s = resolve(t, root, s)
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, v) {
		bad("%v, want %v", v, c)
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return reflect.DeepEqual(x, v) }) {
		bad("%v is not one of %v", v, e)
	}
	if ty, ok := s["type"]; ok {
		types := []any{ty}
		if list, ok := ty.([]any); ok {
			types = list
		}
		if !slices.ContainsFunc(types, func(x any) bool { return jsonType(v, x.(string)) }) {
			bad("%T %v is not of type %v", v, v, ty)
			return errs
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := v[r.(string)]; !ok {
				bad("lacks required key %q", r)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, validate(t, root, ps, v[k], at+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					bad("key %q is not in the schema", k)
				}
			case map[string]any:
				errs = append(errs, validate(t, root, ap, v[k], at+"."+k)...)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range v {
				errs = append(errs, validate(t, root, items, x, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

// jsonType says whether v, as encoding/json decodes it, is of JSON Schema
// type ty.
func jsonType(v any, ty string) bool {
	switch v := v.(type) {
	case nil:
		return ty == "null"
	case bool:
		return ty == "boolean"
	case string:
		return ty == "string"
	case float64:
		return ty == "number" || ty == "integer" && v == float64(int64(v))
	case []any:
		return ty == "array"
	case map[string]any:
		return ty == "object"
	}
	return false
}

// The JSON of checks of every kind of result (ok, safety and liveness
// violations, one of linearizability with its history, inconclusive,
// local mode) is valid under
// docs/check.schema.json and names its version; and the validator does
// reject what the schema does not allow.
func TestCheckJSONSchema(t *testing.T) {
	root := readSchema(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		result string
	}{
		{[]string{"lcr"}, "ok"},
		{[]string{"lcr", "--bug", "no-discard"}, "safety-violation"},
		{[]string{"randtree", "--bug", "RT3"}, "liveness-violation"},
		{[]string{"randtree", "--max-states", "50"}, "ok"},
		{[]string{"randtree", "--max-states", "50", "--min-depth", "5"}, "inconclusive"},
		{[]string{"paxos", "--mode", "local"}, "ok"},
		{[]string{"kvstore", "--bug", "read-backup"}, "safety-violation"},
	} {
		var stdout, stderr strings.Builder
		livecheck.Run(append(append([]string{"check"}, tc.args...), "-q", "--json", "--out", dir), &stdout, &stderr, systems.All()...)
		var v map[string]any
		if err := json.Unmarshal([]byte(stdout.String()), &v); err != nil {
			t.Fatalf("check %v: %v\n%s", tc.args, err, stderr.String())
		}
		if v["result"] != tc.result || v["schema"] != reports.CheckSchema {
			t.Errorf("check %v: result %v, schema %v; want %s, %s", tc.args, v["result"], v["schema"], tc.result, reports.CheckSchema)
		}
		for _, e := range validate(t, root, root, v, "$") {
			t.Errorf("check %v: %s", tc.args, e)
		}
		if tc.result == "liveness-violation" {
			// What the schema forbids is refused: a key it lacks, a
			// required key left out, a value of another type.
			v["extra"] = 1
			delete(v, "seed")
			v["critical"].(map[string]any)["kind"] = "teleport"
			v["stats"].(map[string]any)["states"] = "many"
			if got := len(validate(t, root, root, v, "$")); got != 4 {
				t.Errorf("a report broken 4 ways gives %d errors, want 4", got)
			}
		}
	}
}

// Every key of reports.Check's JSON, nested ones included, is in the
// schema, and the schema has no key the report cannot have; the keys the
// report always writes (no omitempty) are the schema's required ones.
func TestCheckSchemaKeys(t *testing.T) {
	root := readSchema(t)
	var walk func(ty reflect.Type, s map[string]any, at string)
	walk = func(ty reflect.Type, s map[string]any, at string) {
		s = resolve(t, root, s)
		for ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		switch ty.Kind() {
		case reflect.Slice:
			items, ok := s["items"].(map[string]any)
			if !ok {
				t.Errorf("%s: a list in the report, without items in the schema", at)
				return
			}
			walk(ty.Elem(), items, at+"[]")
			return
		case reflect.Map:
			ap, ok := s["additionalProperties"].(map[string]any)
			if !ok {
				t.Errorf("%s: a map in the report, without additionalProperties in the schema", at)
				return
			}
			walk(ty.Elem(), ap, at+"{}")
			return
		case reflect.Struct:
		default:
			return
		}
		props, _ := s["properties"].(map[string]any)
		keys, required := []string{}, []string{}
		for _, f := range jsonFields(ty) {
			tag := f.Tag.Get("json")
			if tag == "-" || !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" {
				t.Errorf("%s: field %s has no JSON name", at, f.Name)
				continue
			}
			keys = append(keys, name)
			if opts != "omitempty" {
				required = append(required, name)
			}
			ps, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s: key %q (field %s) is not in the schema", at, name, f.Name)
				continue
			}
			walk(f.Type, ps, at+"."+name)
		}
		for k := range props {
			if !slices.Contains(keys, k) {
				t.Errorf("%s: the schema has key %q, which the report does not", at, k)
			}
		}
		want := []string{}
		req, _ := s["required"].([]any)
		for _, r := range req {
			want = append(want, r.(string))
		}
		slices.Sort(required)
		slices.Sort(want)
		if !slices.Equal(required, want) {
			t.Errorf("%s: keys always written %v, the schema requires %v", at, required, want)
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: the schema allows keys it does not name", at)
		}
	}
	walk(reflect.TypeOf(reports.Check{}), root, "$")
}

// jsonFields lists ty's fields as encoding/json writes them: an embedded
// struct without a JSON name gives its own fields.
func jsonFields(ty reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range ty.NumField() {
		f := ty.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		out = append(out, f)
	}
	return out
}

package fsmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/fsmgen/fsmgen/internal/suggest"
)

// Saved data is read strictly: a member of a JSON object that names no
// field of the value it is decoded into, one that names a field in another
// case, and a member given twice are refused, naming the field, where
// encoding/json would drop the first silently, match the second regardless
// of case and keep the last of the third. A field missing from the data
// loads as its zero value. The rule applies to the states, events and
// actions of a generated package and to the saved machine around them;
// the types of their fields (a chat.Conversation, say) decode as their own
// package says.

// fieldNames returns the JSON names of the fields of struct type t, as
// encoding/json marshals them (the tag's name, or the field's), and the
// names of its embedded structs' fields.
func fieldNames(t reflect.Type) map[string]bool {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.(map[string]bool)
	}
	names := map[string]bool{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			for n := range fieldNames(f.Type) {
				names[n] = true
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
	fieldCache.Store(t, names)
	return names
}

var fieldCache sync.Map // reflect.Type → map[string]bool

// members reads the members of the JSON object data, in order; an error
// when data is not one object, or gives a member twice.
func members(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("want a JSON object, found %s", describe(tok))
	}
	var keys []string
	var values []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key := tok.(string) // an object's member names are strings
		if seen[key] {
			return nil, nil, fmt.Errorf("duplicate field %q", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("field %q: %w", key, err)
		}
		keys = append(keys, key)
		values = append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, errors.New("more than one JSON value")
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, errors.New("more than one JSON value")
	}
	return keys, values, nil
}

// describe names a JSON token for an error.
func describe(tok json.Token) string {
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// decodeStrict decodes the JSON object data into v, a pointer to a
// struct, strictly (see above). skip is a member decodeStrict leaves to
// the caller ("kind"); renamed maps the old JSON names of renamed fields
// to their new ones, so that data saved before a rename still loads.
func decodeStrict(data []byte, v any, skip string, renamed map[string]string) error {
	keys, values, err := members(data)
	if err != nil {
		return err
	}
	known := fieldNames(reflect.TypeOf(v).Elem())
	out := make(map[string]json.RawMessage, len(keys))
	for i, key := range keys {
		switch {
		case key == skip:
			continue
		case known[key]:
		case renamed[key] != "":
			key = renamed[key]
		default:
			var names []string
			for n := range known {
				names = append(names, n)
			}
			return fmt.Errorf("unknown field %q%s", key, suggest.DidYouMean(key, names))
		}
		if _, twice := out[key]; twice {
			return fmt.Errorf("field %q is given twice, once under its old name", key)
		}
		out[key] = values[i]
	}
	rewritten, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(rewritten, v)
}

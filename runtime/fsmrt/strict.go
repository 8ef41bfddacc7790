package fsmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
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

// fields describes a struct type as strict decoding reads it: the JSON
// names of its fields, as encoding/json marshals them (the tag's name, or
// the field's), with the names of its embedded structs' fields; and, for a
// struct without embedded fields, each name's field (its index and
// decoder), so that each member decodes into its field alone.
type fields struct {
	names map[string]bool
	index map[string]fieldOf // nil for a struct with embedded fields
}

// fieldOf is a field of a struct without embedded fields.
type fieldOf struct {
	index  int
	decode decoder
}

func fieldsOf(t reflect.Type) *fields {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.(*fields)
	}
	fs := &fields{names: map[string]bool{}, index: map[string]fieldOf{}}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			for n := range fieldsOf(f.Type).names {
				fs.names[n] = true
			}
			fs.index = nil
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs.names[name] = true
		if fs.index != nil {
			fs.index[name] = fieldOf{index: f.Index[0], decode: decoderOf(f.Type)}
		}
	}
	fieldCache.Store(t, fs)
	return fs
}

var fieldCache sync.Map // reflect.Type → *fields

// member is a member of a JSON object: its name (its bytes in the
// object's JSON when it has no escape) and its value's JSON, without the
// space around it.
type member struct {
	key   []byte
	value json.RawMessage
}

// members reads the members of the JSON object data, in order; an error
// when data is not one JSON object, or gives a member twice. It checks
// the syntax and finds the members in one pass over the bytes (scan.go),
// several times faster than json.Valid followed by json.Decoder's tokens;
// when data is not one JSON object, encoding/json says where and what.
func members(data []byte) ([]member, error) { return membersIn(data, nil) }

// membersIn is members, appending to ms.
func membersIn(data []byte, ms []member) ([]member, error) {
	sc := scanner{data: data}
	ms, dup, ok := sc.document(ms)
	if !ok {
		return nil, notObject(data)
	}
	if dup >= 0 {
		return nil, fmt.Errorf("duplicate field %q", ms[dup].key)
	}
	return ms, nil
}

// find returns the index of the member named key, or -1.
func find(ms []member, key string) int {
	for i, m := range ms {
		if string(m.key) == key {
			return i
		}
	}
	return -1
}

// notObject returns the error of data, which is not one JSON object: its
// syntax error as encoding/json reports it, or what it is instead.
func notObject(data []byte) error {
	if !json.Valid(data) {
		dec := json.NewDecoder(bytes.NewReader(data))
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		return errors.New("more than one JSON value")
	}
	var v any
	_ = json.Unmarshal(data, &v)
	return fmt.Errorf("want a JSON object, found %s", describeJSON(v))
}

// describeJSON names the kind of a decoded JSON value for an error.
func describeJSON(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// decodeStrict decodes the JSON object data into v, a pointer to a
// struct, strictly (see above). skip is a member decodeStrict leaves to
// the caller ("kind"); renamed maps the old JSON names of renamed fields
// to their new ones, so that data saved before a rename still loads.
func decodeStrict(data []byte, v any, skip string, renamed map[string]string) error {
	buf := getMembers()
	ms, err := membersIn(data, *buf)
	if err == nil {
		err = decodeMembers(ms, data, v, skip, renamed)
	}
	putMembers(buf, ms)
	return err
}

// decodeMembers decodes an object members has read (data is its JSON)
// into v, strictly.
func decodeMembers(ms []member, data []byte, v any, skip string, renamed map[string]string) error {
	rv := reflect.ValueOf(v).Elem()
	fs := fieldsOf(rv.Type())
	rename := false
	for _, m := range ms {
		switch key := m.key; {
		case string(key) == skip, fs.names[string(key)]:
		case renamed[string(key)] != "":
			if find(ms, renamed[string(key)]) >= 0 {
				return fmt.Errorf("field %q is given twice, once under its old name %q", renamed[string(key)], key)
			}
			rename = true
		default:
			var names []string
			for n := range fs.names {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range append(names, skip) {
				if n != "" && strings.EqualFold(n, string(key)) {
					return fmt.Errorf("unknown field %q: %s", key, recased(string(key), n))
				}
			}
			return fmt.Errorf("unknown field %q%s", key, suggest.DidYouMean(string(key), names))
		}
	}
	if fs.index != nil {
		// Each member into its field: members has read them already.
		for _, m := range ms {
			key := string(m.key)
			if key == skip {
				continue
			}
			if n := renamed[key]; n != "" {
				key = n
			}
			f := fs.index[key]
			if err := f.decode(m.value, rv.Field(f.index)); err != nil {
				return fmt.Errorf("field %q: %w", m.key, err)
			}
		}
		return nil
	}
	if !rename {
		// Every member is a field by its exact name (or skip, which v
		// has not): encoding/json decodes them as they are.
		return json.Unmarshal(data, v)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, m := range ms {
		key := string(m.key)
		if key == skip {
			continue
		}
		if n := renamed[key]; n != "" {
			key = n
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(key)
		b.Write(name)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return json.Unmarshal(b.Bytes(), v)
}

// recased says that member key names name in another case, which strict
// reading refuses.
func recased(key, name string) string {
	return fmt.Sprintf("%q is not %q: strict reading takes a member by its name in its exact case", key, name)
}

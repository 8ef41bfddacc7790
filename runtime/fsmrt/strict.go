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
	"unicode/utf8"

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
// struct without embedded fields, each name's field index, so that each
// member decodes into its field alone.
type fields struct {
	names map[string]bool
	index map[string]int // nil for a struct with embedded fields
}

func fieldsOf(t reflect.Type) *fields {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.(*fields)
	}
	fs := &fields{names: map[string]bool{}, index: map[string]int{}}
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
			fs.index[name] = f.Index[0]
		}
	}
	fieldCache.Store(t, fs)
	return fs
}

var fieldCache sync.Map // reflect.Type → *fields

// members reads the members of the JSON object data, in order: their
// names and their values' JSON; an error when data is not one JSON
// object, or gives a member twice. It scans the object's top level
// itself (json.Valid has checked the syntax), which is several times
// faster than json.Decoder's tokens.
func members(data []byte) ([]string, []json.RawMessage, error) {
	if !json.Valid(data) {
		// Say where and what.
		dec := json.NewDecoder(bytes.NewReader(data))
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		return nil, nil, errors.New("more than one JSON value")
	}
	sc := scanner{data: data}
	sc.space()
	if sc.peek() != '{' {
		var v any
		_ = json.Unmarshal(data, &v)
		return nil, nil, fmt.Errorf("want a JSON object, found %s", describeJSON(v))
	}
	sc.i++
	var keys []string
	var values []json.RawMessage
	for {
		sc.space()
		if sc.peek() == '}' {
			break
		}
		if len(keys) > 0 {
			sc.i++ // ','
			sc.space()
		}
		key, err := sc.str()
		if err != nil {
			return nil, nil, err
		}
		if slices.Contains(keys, key) {
			return nil, nil, fmt.Errorf("duplicate field %q", key)
		}
		sc.space()
		sc.i++ // ':'
		sc.space()
		start := sc.i
		sc.value()
		keys = append(keys, key)
		values = append(values, json.RawMessage(data[start:sc.i]))
	}
	return keys, values, nil
}

// scanner walks JSON that json.Valid has accepted.
type scanner struct {
	data []byte
	i    int
}

func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) space() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t' || s.data[s.i] == '\n' || s.data[s.i] == '\r') {
		s.i++
	}
}

// str reads a string and returns its value.
func (s *scanner) str() (string, error) {
	start := s.i
	s.skipString()
	raw := s.data[start:s.i]
	plain := true // no escape, and ASCII: the bytes are the string
	for _, c := range raw {
		plain = plain && c != '\\' && c < utf8.RuneSelf
	}
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var v string
	err := json.Unmarshal(raw, &v)
	return v, err
}

// skipString moves past the string at s.i.
func (s *scanner) skipString() {
	s.i++ // '"'
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return
		}
		s.i++
	}
}

// value moves past the value at s.i.
func (s *scanner) value() {
	depth := 0
	for s.i < len(s.data) {
		switch c := s.data[s.i]; c {
		case '"':
			s.skipString()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				s.i++
				return
			}
		case ',':
			if depth == 0 {
				return
			}
		}
		s.i++
	}
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
	keys, values, err := members(data)
	if err != nil {
		return err
	}
	return decodeMembers(keys, values, data, v, skip, renamed)
}

// decodeMembers decodes an object members has read (data is its JSON)
// into v, strictly.
func decodeMembers(keys []string, values []json.RawMessage, data []byte, v any, skip string, renamed map[string]string) error {
	rv := reflect.ValueOf(v).Elem()
	fs := fieldsOf(rv.Type())
	rename := false
	for _, key := range keys {
		switch {
		case key == skip, fs.names[key]:
		case renamed[key] != "":
			if slices.Contains(keys, renamed[key]) {
				return fmt.Errorf("field %q is given twice, once under its old name %q", renamed[key], key)
			}
			rename = true
		default:
			var names []string
			for n := range fs.names {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range append(names, skip) {
				if n != "" && strings.EqualFold(n, key) {
					return fmt.Errorf("unknown field %q: %s", key, recased(key, n))
				}
			}
			return fmt.Errorf("unknown field %q%s", key, suggest.DidYouMean(key, names))
		}
	}
	if fs.index != nil {
		// Each member into its field: members has read them already.
		for i, key := range keys {
			if key == skip {
				continue
			}
			if n := renamed[key]; n != "" {
				key = n
			}
			if err := json.Unmarshal(values[i], rv.Field(fs.index[key]).Addr().Interface()); err != nil {
				return fmt.Errorf("field %q: %w", keys[i], err)
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
	for i, key := range keys {
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
		b.Write(values[i])
	}
	b.WriteByte('}')
	return json.Unmarshal(b.Bytes(), v)
}

// recased says that member key names name in another case, which strict
// reading refuses.
func recased(key, name string) string {
	return fmt.Sprintf("%q is not %q: strict reading takes a member by its name in its exact case", key, name)
}

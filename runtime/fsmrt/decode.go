package fsmrt

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
)

// A member of saved data decodes into its field as encoding/json decodes
// it (json.Unmarshal into the field), without encoding/json's cost for
// the common types: the JSON has been checked already (scan.go), so a
// decoder reads the value's bytes directly. A type implementing
// json.Unmarshaler (time.Time, json.RawMessage) is handed its bytes, as
// encoding/json does; strings without escapes, booleans, integers and
// floating-point numbers, pointers, slices and plain structs of these are
// decoded here; everything else, and every value a decoder here does not
// take as it is (an escaped string, a number too large, a struct member
// in another case), goes to json.Unmarshal, so that the value, or the
// error, is what encoding/json makes of it. FuzzDecode checks both agree.

// decoder decodes raw, one checked JSON value with no space around it,
// into v, an addressable value of the decoder's type.
type decoder func(raw []byte, v reflect.Value) error

var (
	decoderCache       sync.Map // reflect.Type → decoder
	unmarshalerType    = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerTyp = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decoderOf returns the decoder of values of type t.
func decoderOf(t reflect.Type) decoder {
	if d, ok := decoderCache.Load(t); ok {
		return d.(decoder)
	}
	d := newDecoder(t, map[reflect.Type]bool{})
	decoderCache.Store(t, d)
	return d
}

// newDecoder makes the decoder of t; building holds the struct types whose
// decoder is being made (a type that contains itself, through a pointer or
// a slice, finds its own decoder when it decodes).
func newDecoder(t reflect.Type, building map[reflect.Type]bool) decoder {
	if building[t] {
		return func(raw []byte, v reflect.Value) error { return decoderOf(t)(raw, v) }
	}
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(unmarshalerType):
		return decodeUnmarshaler
	case pt.Implements(textUnmarshalerTyp):
		return decodeJSON
	}
	switch t.Kind() {
	case reflect.String:
		return decodeString
	case reflect.Bool:
		return decodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decodeUint
	case reflect.Float32, reflect.Float64:
		return decodeFloat
	case reflect.Pointer:
		return pointerDecoder(t, newDecoder(t.Elem(), building))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return decodeJSON // base64, as encoding/json reads []byte
		}
		return sliceDecoder(t, newDecoder(t.Elem(), building))
	case reflect.Struct:
		building[t] = true
		defer delete(building, t)
		if d := structDecoder(t, building); d != nil {
			return d
		}
	}
	return decodeJSON
}

// decodeJSON decodes raw with encoding/json.
func decodeJSON(raw []byte, v reflect.Value) error {
	return json.Unmarshal(raw, v.Addr().Interface())
}

// decodeUnmarshaler hands raw to v's UnmarshalJSON method, as
// encoding/json does (null included).
func decodeUnmarshaler(raw []byte, v reflect.Value) error {
	return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw)
}

func isNull(raw []byte) bool { return string(raw) == "null" }

func decodeString(raw []byte, v reflect.Value) error {
	if raw[0] == '"' {
		for _, c := range raw[1 : len(raw)-1] {
			if c == '\\' || c >= 0x80 {
				return decodeJSON(raw, v)
			}
		}
		v.SetString(string(raw[1 : len(raw)-1]))
		return nil
	}
	if isNull(raw) {
		return nil // as encoding/json: null leaves it as it is
	}
	return decodeJSON(raw, v)
}

func decodeBool(raw []byte, v reflect.Value) error {
	switch string(raw) {
	case "true":
		v.SetBool(true)
	case "false":
		v.SetBool(false)
	case "null":
	default:
		return decodeJSON(raw, v)
	}
	return nil
}

// digits returns the value of raw when it is an integer of at most 18
// digits (which int64 holds), with its sign; ok is false otherwise.
func digits(raw []byte) (n int64, neg, ok bool) {
	if len(raw) > 0 && raw[0] == '-' {
		neg, raw = true, raw[1:]
	}
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false, false
	}
	for _, c := range raw {
		if !isDigit(c) {
			return 0, false, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, neg, true
}

func decodeInt(raw []byte, v reflect.Value) error {
	if n, _, ok := digits(raw); ok && !v.OverflowInt(n) {
		v.SetInt(n)
		return nil
	}
	if isNull(raw) {
		return nil
	}
	return decodeJSON(raw, v)
}

func decodeUint(raw []byte, v reflect.Value) error {
	if n, neg, ok := digits(raw); ok && !neg && !v.OverflowUint(uint64(n)) {
		v.SetUint(uint64(n))
		return nil
	}
	if isNull(raw) {
		return nil
	}
	return decodeJSON(raw, v)
}

func decodeFloat(raw []byte, v reflect.Value) error {
	if c := raw[0]; c == '-' || isDigit(c) {
		f, err := strconv.ParseFloat(string(raw), v.Type().Bits())
		if err == nil && !v.OverflowFloat(f) {
			v.SetFloat(f)
			return nil
		}
	}
	if isNull(raw) {
		return nil
	}
	return decodeJSON(raw, v)
}

// pointerDecoder decodes null as a nil pointer, anything else into what
// the pointer points to (a new value when it is nil), with elem.
func pointerDecoder(t reflect.Type, elem decoder) decoder {
	return func(raw []byte, v reflect.Value) error {
		if isNull(raw) {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return elem(raw, v.Elem())
	}
}

// sliceDecoder decodes null as a nil slice, an array into a new slice of
// its elements (into a slice that is not nil, encoding/json reuses its
// array: json.Unmarshal does it).
func sliceDecoder(t reflect.Type, elem decoder) decoder {
	return func(raw []byte, v reflect.Value) error {
		switch {
		case isNull(raw):
			v.SetZero()
			return nil
		case raw[0] != '[' || !v.IsNil():
			return decodeJSON(raw, v)
		}
		var items [][]byte
		s := scanner{data: raw, i: 1}
		s.space()
		for s.peek() != ']' {
			start := s.i
			s.value(0)
			items = append(items, raw[start:s.i])
			s.space()
			if s.peek() == ',' {
				s.i++
				s.space()
			}
		}
		out := reflect.MakeSlice(t, len(items), len(items))
		for i, item := range items {
			if err := elem(item, out.Index(i)); err != nil {
				return decodeJSON(raw, v) // encoding/json's error
			}
		}
		v.Set(out)
		return nil
	}
}

// structField is a field of a struct as encoding/json names it.
type structField struct {
	name   string
	index  int
	decode decoder
}

// structDecoder returns the decoder of a struct of exported fields, none
// embedded, whose tags give only names (encoding/json's plainest
// structs), or nil for any other struct. A member that names no field
// exactly (encoding/json ignores it, or matches it regardless of case), a
// member given twice, and a value the field's decoder refuses, send the
// whole struct to json.Unmarshal.
func structDecoder(t reflect.Type, building map[reflect.Type]bool) decoder {
	var fields []structField
	for f := range t.Fields() {
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts := tag, ""
		for i := range len(tag) {
			if tag[i] == ',' {
				name, opts = tag[:i], tag[i+1:]
				break
			}
		}
		if opts != "" && opts != "omitempty" && opts != "omitzero" && opts != "omitempty,omitzero" && opts != "omitzero,omitempty" {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		if !plainName(name) {
			return nil
		}
		for _, g := range fields {
			if g.name == name {
				return nil // encoding/json drops both
			}
		}
		fields = append(fields, structField{name: name, index: f.Index[0], decode: newDecoder(f.Type, building)})
	}
	return func(raw []byte, v reflect.Value) error {
		if raw[0] != '{' {
			if isNull(raw) {
				return nil
			}
			return decodeJSON(raw, v)
		}
		var seen uint64
		s := scanner{data: raw, i: 1}
		s.space()
		for s.peek() != '}' {
			start := s.i
			plain, _ := s.skipString()
			key := raw[start+1 : s.i-1]
			s.space()
			s.i++ // ':'
			s.space()
			start = s.i
			s.value(0)
			item := raw[start:s.i]
			s.space()
			if s.peek() == ',' {
				s.i++
				s.space()
			}
			i := -1
			if plain {
				for j := range fields {
					if fields[j].name == string(key) {
						i = j
						break
					}
				}
			}
			if i < 0 || i >= 64 || seen&(1<<i) != 0 {
				return decodeJSON(raw, v)
			}
			seen |= 1 << i
			if err := fields[i].decode(item, v.Field(fields[i].index)); err != nil {
				return decodeJSON(raw, v)
			}
		}
		return nil
	}
}

// plainName reports whether name is made of letters, digits, '_' and '-'
// only (encoding/json takes some other names too, and ignores a few).
func plainName(name string) bool {
	for _, c := range []byte(name) {
		if !isDigit(c) && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && c != '_' && c != '-' {
			return false
		}
	}
	return name != ""
}

package fsmrt

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
)

// A state's fields encode as json.Marshal encodes them, without
// encoding/json's cost for the common types (every step of a server's
// monitor or job saves its machine): an encoder made once per type writes
// booleans, integers, strings with nothing to escape and plain structs of
// these itself, and hands a type implementing json.Marshaler (time.Time)
// to its method, keeping what it returns when json.Marshal would keep it
// as it is (compactJSON); everything else (floats, pointers, slices,
// maps, a string to escape, a struct with embedded fields or tag options
// other than omitempty) goes to json.Marshal, so that the bytes, and the
// errors, are encoding/json's. FuzzEncode checks both agree.

// encoder appends the JSON of v, a value of the encoder's type, to b.
type encoder func(b []byte, v reflect.Value) ([]byte, error)

var (
	encoderCache     sync.Map // reflect.Type → encoder
	marshalerType    = reflect.TypeFor[json.Marshaler]()
	textMarshalerTyp = reflect.TypeFor[encoding.TextMarshaler]()
)

// appendJSON appends the JSON of v as json.Marshal writes it.
func appendJSON(b []byte, v any) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	rv := reflect.ValueOf(v)
	return encoderOf(rv.Type())(b, rv)
}

// encoderOf returns the encoder of values of type t.
func encoderOf(t reflect.Type) encoder {
	if e, ok := encoderCache.Load(t); ok {
		return e.(encoder)
	}
	e := newEncoder(t)
	encoderCache.Store(t, e)
	return e
}

// newEncoder makes the encoder of t. The values it encodes are not
// addressable (a value handed to json.Marshal, and its fields), so a
// method json.Marshal would call is one of t itself, not of *t.
func newEncoder(t reflect.Type) encoder {
	switch {
	case t.Implements(marshalerType):
		return encodeMarshaler
	case t.Implements(textMarshalerTyp), reflect.PointerTo(t).Implements(marshalerType), reflect.PointerTo(t).Implements(textMarshalerTyp):
		return encodeJSON
	}
	switch t.Kind() {
	case reflect.Bool:
		return encodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encodeUint
	case reflect.String:
		return encodeString
	case reflect.Struct:
		if e := structEncoder(t); e != nil {
			return e
		}
	}
	return encodeJSON
}

// encodeJSON encodes v with encoding/json.
func encodeJSON(b []byte, v reflect.Value) ([]byte, error) {
	out, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

// encodeMarshaler appends what v's MarshalJSON returns, when json.Marshal
// would write it as it is.
func encodeMarshaler(b []byte, v reflect.Value) ([]byte, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() || v.Kind() == reflect.Interface && v.IsNil() {
		return append(b, "null"...), nil
	}
	out, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil || !compactJSON(out) {
		return encodeJSON(b, v)
	}
	return append(b, out...), nil
}

func encodeBool(b []byte, v reflect.Value) ([]byte, error) {
	return strconv.AppendBool(b, v.Bool()), nil
}

func encodeInt(b []byte, v reflect.Value) ([]byte, error) {
	return strconv.AppendInt(b, v.Int(), 10), nil
}

func encodeUint(b []byte, v reflect.Value) ([]byte, error) {
	return strconv.AppendUint(b, v.Uint(), 10), nil
}

func encodeString(b []byte, v reflect.Value) ([]byte, error) {
	return appendJSONString(b, v.String()), nil
}

// field is a struct field as a structEncoder writes it.
type field struct {
	index     int
	key       string // `"name":`
	omitEmpty bool
	encode    encoder
}

// structEncoder returns the encoder of struct type t when its fields are
// plain: exported or skipped as encoding/json skips them, none embedded,
// named by tags of letters, digits, '_' and '-' (or by their Go names), no
// two alike, no tag option but omitempty. nil otherwise.
func structEncoder(t reflect.Type) encoder {
	var fields []field
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
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
		name, opts, _ := cutComma(tag)
		omitEmpty := false
		switch opts {
		case "":
		case "omitempty":
			omitEmpty = true
		default:
			return nil
		}
		if name == "" {
			name = f.Name
		}
		if !plainName(name) || seen[name] {
			return nil
		}
		seen[name] = true
		fields = append(fields, field{index: i, key: `"` + name + `":`, omitEmpty: omitEmpty, encode: encoderOf(f.Type)})
	}
	return func(b []byte, v reflect.Value) ([]byte, error) {
		b = append(b, '{')
		first := true
		for _, f := range fields {
			fv := v.Field(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, f.key...)
			var err error
			if b, err = f.encode(b, fv); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
}

func cutComma(tag string) (name, opts string, found bool) {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

// isEmpty reports whether omitempty leaves v out, as encoding/json
// decides.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

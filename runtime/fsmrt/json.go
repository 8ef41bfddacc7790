package fsmrt

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// The JSON encoding of a generated machine's states, events and actions
// is an object with the value's kind first, then its fields:
// {"kind":"calling_llm","retries":2}. Generated MarshalJSON methods write
// it with MarshalKind; UnmarshalState, UnmarshalEvent and UnmarshalAction
// read them with Unmarshal, which reads the object once, finds its kind and
// decodes it with that kind's Decoder (Value or Pointer), strictly (see
// decodeStrict).

// MarshalKind encodes fields, a struct without a MarshalJSON method, as a
// JSON object with "kind" first: the bytes json.Marshal writes for fields,
// with the kind before them (see encode.go).
func MarshalKind(kind string, fields any) ([]byte, error) {
	// {"kind":"k"} then the fields' object written over its closing
	// brace: {"kind":"k",...}, or {"kind":"k"} for no field.
	out := make([]byte, 0, 256)
	out = append(out, `{"kind":`...)
	out = appendJSONString(out, kind)
	body := len(out)
	out, err := appendJSON(out, fields)
	if err != nil {
		return nil, err
	}
	switch {
	case len(out)-body < 2 || out[body] != '{' || out[len(out)-1] != '}':
		return nil, fmt.Errorf("fsmrt: the fields of kind %q encode as %s, not as an object", kind, out[body:])
	case len(out)-body == 2: // {}
		return append(out[:body], '}'), nil
	}
	out[body] = ','
	return out, nil
}

// object is a JSON object as members read it: its JSON, and its members,
// in order.
type object struct {
	data    []byte
	members []member
	// buf is where members were read (getMembers), handed back once the
	// object is decoded.
	buf *[]member
}

// kindOf reads the object of a JSON-encoded state, event or action of the
// machine and its "kind"; what says which, for the error.
func (d *Desc[S, E, A]) kindOf(data []byte, what string) (*object, string, error) {
	buf := getMembers()
	ms, err := membersIn(data, *buf)
	if err != nil {
		return nil, "", fmt.Errorf("%s: decode %s: %w", d.Package, what, err)
	}
	obj := &object{data: data, members: ms, buf: buf}
	i := find(ms, "kind")
	if i < 0 {
		for _, m := range ms {
			if key := string(m.key); strings.EqualFold(key, "kind") {
				return nil, "", fmt.Errorf("%s: decode %s: no \"kind\": %s", d.Package, what, recased(key, "kind"))
			}
		}
		return nil, "", fmt.Errorf("%s: decode %s: no \"kind\"", d.Package, what)
	}
	var kind string
	if err := decodeString(ms[i].value, reflect.ValueOf(&kind).Elem()); err != nil {
		return nil, "", fmt.Errorf("%s: decode %s: \"kind\" is not a string", d.Package, what)
	}
	if kind == "" {
		return nil, "", fmt.Errorf("%s: decode %s: no \"kind\"", d.Package, what)
	}
	return obj, kind, nil
}

// ErrUnknownKind is wrapped by the error of JSON whose kind is no state,
// event or action of the machine: UnmarshalState's, UnmarshalEvent's,
// UnmarshalAction's, and Load's of a machine saved in a state that is no
// longer one.
var ErrUnknownKind = errors.New("unknown kind")

// kindError is an error that wraps ErrUnknownKind.
type kindError struct{ msg string }

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return ErrUnknownKind }

// UnknownKind is the error of a kind that is not a state, event or
// action of the machine; what says which.
func (d *Desc[S, E, A]) UnknownKind(what, kind string) error {
	return &kindError{fmt.Sprintf("%s: decode %s: unknown kind %q", d.Package, what, kind)}
}

// Decoder decodes the JSON of one kind of state, event or action; Value
// and Pointer make one, Unmarshal uses it.
type Decoder[I any] func(obj *object) (I, error)

// Unmarshal decodes the JSON of a state, event or action (what says
// which) with the decoder of its kind: decoders maps each JSON kind, and
// each name a kind had before (renamed_from), to its decoder.
func Unmarshal[I any, S, E, A Kind](d *Desc[S, E, A], what string, data []byte, decoders map[string]Decoder[I]) (I, error) {
	var zero I
	obj, kind, err := d.kindOf(data, what)
	if err != nil {
		return zero, err
	}
	defer putMembers(obj.buf, obj.members)
	decode := decoders[kind]
	if decode == nil {
		return zero, d.UnknownKind(what, kind)
	}
	return decode(obj)
}

// Value returns the decoder of T, a state (a value), as an I; what names
// its kind, for errors and for the fields it renamed: "state calling_llm".
func Value[T, I any, S, E, A Kind](d *Desc[S, E, A], what string) Decoder[I] {
	return func(obj *object) (I, error) {
		v, err := decode[T](d, obj, what)
		if err != nil {
			var zero I
			return zero, err
		}
		return any(*v).(I), nil
	}
}

// Pointer returns the decoder of T, an event or an action (a pointer), as
// an I; what names its kind: "event user_input".
func Pointer[T, I any, S, E, A Kind](d *Desc[S, E, A], what string) Decoder[I] {
	return func(obj *object) (I, error) {
		v, err := decode[T](d, obj, what)
		if err != nil {
			var zero I
			return zero, err
		}
		return any(v).(I), nil
	}
}

// decode decodes an object into a new T, strictly (see decodeStrict),
// with the renames the spec declares for what.
func decode[T any, S, E, A Kind](d *Desc[S, E, A], obj *object, what string) (*T, error) {
	v := new(T)
	if err := decodeMembers(obj.members, obj.data, v, "kind", d.Renamed[what]); err != nil {
		return nil, fmt.Errorf("%s: decode %s: %w", d.Package, what, err)
	}
	return v, nil
}

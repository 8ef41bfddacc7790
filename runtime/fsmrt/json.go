package fsmrt

import (
	"encoding/json"
	"fmt"
)

// The JSON encoding of a generated machine's states, events and actions
// is an object with the value's kind first, then its fields:
// {"kind":"calling_llm","retries":2}. Generated MarshalJSON methods write
// it with MarshalKind; UnmarshalState, UnmarshalEvent and UnmarshalAction
// read the kind with KindOf and decode the value with DecodeValue or
// DecodePointer, strictly (see decodeStrict).

// MarshalKind encodes fields, a struct without a MarshalJSON method, as a
// JSON object with "kind" first.
func MarshalKind(kind string, fields any) ([]byte, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(kind)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(`{"kind":,`)+len(head)+len(body))
	out = append(out, `{"kind":`...)
	out = append(out, head...)
	if len(body) > 2 { // not {}
		out = append(out, ',')
		out = append(out, body[1:len(body)-1]...)
	}
	return append(out, '}'), nil
}

// KindOf returns the "kind" of a JSON-encoded state, event or action of
// the machine; what says which, for the error.
func (d *Desc[S, E, A]) KindOf(data []byte, what string) (string, error) {
	keys, values, err := members(data)
	if err != nil {
		return "", fmt.Errorf("%s: decode %s: %w", d.Package, what, err)
	}
	for i, key := range keys {
		if key != "kind" {
			continue
		}
		var kind string
		if err := json.Unmarshal(values[i], &kind); err != nil {
			return "", fmt.Errorf("%s: decode %s: \"kind\" is not a string", d.Package, what)
		}
		if kind == "" {
			break
		}
		return kind, nil
	}
	return "", fmt.Errorf("%s: decode %s: no \"kind\"", d.Package, what)
}

// UnknownKind returns the error of a kind that names no state, event or
// action of the machine; what says which.
func (d *Desc[S, E, A]) UnknownKind(what, kind string) error {
	return fmt.Errorf("%s: decode %s: unknown kind %q", d.Package, what, kind)
}

// DecodeValue decodes data into a T and returns it as an I: how a
// generated package decodes a state, which is a value. what names the
// kind, for errors: "state calling_llm".
func DecodeValue[T, I any, S, E, A Kind](d *Desc[S, E, A], data []byte, what string) (I, error) {
	v, err := decode[T](d, data, what)
	if err != nil {
		var zero I
		return zero, err
	}
	return any(*v).(I), nil
}

// DecodePointer decodes data into a new T and returns the pointer as an
// I: how a generated package decodes an event or an action, which are
// pointers. what names the kind, for errors: "event user_input".
func DecodePointer[T, I any, S, E, A Kind](d *Desc[S, E, A], data []byte, what string) (I, error) {
	v, err := decode[T](d, data, what)
	if err != nil {
		var zero I
		return zero, err
	}
	return any(v).(I), nil
}

// decode decodes data into a new T, strictly (see decodeStrict), with the
// renames the spec declares for what.
func decode[T any, S, E, A Kind](d *Desc[S, E, A], data []byte, what string) (*T, error) {
	v := new(T)
	if err := decodeStrict(data, v, "kind", d.Renamed[what]); err != nil {
		return nil, fmt.Errorf("%s: decode %s: %w", d.Package, what, err)
	}
	return v, nil
}

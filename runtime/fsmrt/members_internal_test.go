package fsmrt

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceMembers reads an object's members with encoding/json's
// tokens, as members did before it scanned the bytes itself.
func referenceMembers(data []byte) ([]string, []json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return nil, nil, false
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys = append(keys, tok.(string))
		values = append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, false // more after the object
	}
	return keys, values, true
}

var memberSeeds = []string{
	`{}`, ` { } `, `{"kind":"on"}`, "{\n\t\"a\" : 1 ,\r\n \"b\":[1,{\"c\":\"}\"}],\"d\":{\"e\":[]}}",
	`{"q\"uote":"\\","s":"a\"}b","u":"\u007d"}`, `{"\u006bind":"x","n":null,"t":true,"f":false,"x":-1.5e3}`,
	`{"a":"x"} {"b":1}`, `[1,2]`, `"s"`, `{"a":1,"a":2}`, `{"a":`, `{"a" 1}`, ``, `{"a":[1,2}`,
}

// TestMembers checks the scanner against encoding/json's tokens.
func TestMembers(t *testing.T) {
	for _, in := range memberSeeds {
		checkMembers(t, []byte(in))
	}
}

func checkMembers(t *testing.T, data []byte) {
	t.Helper()
	ms, err := members(data)
	var keys []string
	var values []json.RawMessage
	for _, m := range ms {
		keys = append(keys, string(m.key))
		values = append(values, m.value)
	}
	wantKeys, wantValues, ok := referenceMembers(data)
	if !ok {
		require.Error(t, err, "%q is not one JSON object", data)
		return
	}
	dup := false
	seen := map[string]bool{}
	for _, k := range wantKeys {
		dup = dup || seen[k]
		seen[k] = true
	}
	if dup {
		assert.ErrorContains(t, err, "duplicate field", "%q", data)
		return
	}
	require.NoError(t, err, "%q", data)
	assert.Equal(t, wantKeys, keys, "%q", data)
	require.Len(t, values, len(wantValues))
	for i := range values {
		assert.JSONEq(t, string(wantValues[i]), string(values[i]), "%q: member %s", data, keys[i])
	}
}

func FuzzMembers(f *testing.F) {
	for _, s := range memberSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkMembers(t, data) })
}

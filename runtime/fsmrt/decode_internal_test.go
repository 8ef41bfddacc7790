package fsmrt

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decoders (decode.go) must decode as json.Unmarshal does, value and
// error alike. These types have a field of each kind they read themselves
// and of each kind they hand to encoding/json.
type (
	target struct {
		S      string          `json:"s"`
		B      bool            `json:"b"`
		I      int             `json:"i"`
		I8     int8            `json:"i8"`
		U16    uint16          `json:"u16"`
		U      uint64          `json:"u"`
		F32    float32         `json:"f32"`
		F      float64         `json:"f"`
		D      time.Duration   `json:"d"`
		T      time.Time       `json:"t"`
		PT     *time.Time      `json:"pt"`
		PI     *int            `json:"pi"`
		N      nested          `json:"n"`
		PN     *nested         `json:"pn"`
		SN     []nested        `json:"sn"`
		SS     []string        `json:"ss"`
		Raw    json.RawMessage `json:"raw"`
		Bytes  []byte          `json:"bytes"`
		M      map[string]int  `json:"m"`
		A      any             `json:"a"`
		Text   text            `json:"text"`
		Arr    [2]int          `json:"arr"`
		Tagged tagged          `json:"tagged"`
		Embeds embeds          `json:"embeds"`
		Named  named           `json:"named"`
	}
	nested struct {
		Name  string    `json:"name"`
		Count int       `json:"count,omitempty"`
		When  time.Time `json:"when"`
		Inner *nested   `json:"inner"`
		Plain int
		Dash  int `json:"-"`
		Dash2 int `json:"-,"`
		Odd   int `json:"odd name"`
		low   int
	}
	tagged struct {
		N int `json:"n,string"`
	}
	embeds struct {
		nested
		X int `json:"x"`
	}
	named string
)

// text reads its JSON string with UnmarshalText, as encoding/json does.
type text struct{ v string }

func (t *text) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return fmt.Errorf("bad text")
	}
	t.v = "text:" + string(b)
	return nil
}

// decoderTypes are the types FuzzDecode decodes every value into.
var decoderTypes = func() []reflect.Type {
	var out []reflect.Type
	t := reflect.TypeFor[target]()
	for f := range t.Fields() {
		out = append(out, f.Type)
	}
	return append(out, t, reflect.TypeFor[[]*nested](), reflect.TypeFor[*[]int](), reflect.TypeFor[uintptr](), reflect.TypeFor[int64]())
}()

var decodeSeeds = []string{
	`"plain"`, `"esc\"aped\n"`, `"caf\u00e9"`, "\"caf\xc3\xa9\"", "\"bad \xff utf-8\"", `""`, `null`, `true`, `false`,
	`0`, `-0`, `1`, `-1`, `127`, `128`, `-129`, `65535`, `65536`, `999999999999999999`, `9999999999999999999`,
	`18446744073709551615`, `18446744073709551616`, `-9223372036854775808`, `1.5`, `-1.5e3`, `1e400`, `3.4e39`, `1E2`,
	`"2026-11-26T03:30:00Z"`, `"2026-11-26T03:30:00.123+01:00"`, `"yesterday"`, `"bad"`, `"aGVsbG8="`, `"!!"`,
	`[]`, `[1,2]`, `[1,"x"]`, `[1,2,3]`, `["a","b"]`, `[{"name":"x"},{"count":2}]`, `[null]`, `[{"name":1}]`,
	`{}`, `{"name":"n","count":3,"when":"2026-11-26T03:30:00Z","inner":{"name":"i"},"Plain":4}`,
	`{"name":"a","name":"b"}`, `{"NAME":"x"}`, `{"Name":"x","name":"y"}`, `{"unknown":1,"name":"x"}`,
	`{"-":1,"Dash":2,"odd name":3,"low":4}`, `{"count":"x"}`, `{"when":"never"}`, `{"inner":null}`, `{"inner":{"inner":{"count":1.5}}}`,
	`{"n":"12"}`, `{"n":12}`, `{"x":1,"name":"e"}`, `{"a":1}`, `{"s":"x","i":1,"n":{"name":"y"},"sn":[{"count":1}]}`,
	`{"name":"x","count":1,"name":"y"}`, `{"when":null,"inner":{}}`,
}

// FuzzDecode checks each decoder against json.Unmarshal on any JSON value.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := []byte(strings.Trim(string(data), " \t\r\n"))
		if !json.Valid(raw) {
			return
		}
		for _, typ := range decoderTypes {
			checkDecoder(t, typ, raw)
		}
	})
}

func TestDecode(t *testing.T) {
	for _, s := range decodeSeeds {
		require.True(t, json.Valid([]byte(s)), s)
		for _, typ := range decoderTypes {
			checkDecoder(t, typ, []byte(s))
		}
	}
}

func checkDecoder(t *testing.T, typ reflect.Type, raw []byte) {
	t.Helper()
	got, want := reflect.New(typ), reflect.New(typ)
	err := decoderOf(typ)(raw, got.Elem())
	wantErr := json.Unmarshal(raw, want.Interface())
	if wantErr != nil {
		require.Error(t, err, "%s into %v: json.Unmarshal fails", raw, typ)
		assert.Equal(t, wantErr.Error(), err.Error(), "%s into %v", raw, typ)
		return
	}
	require.NoError(t, err, "%s into %v", raw, typ)
	assert.Equal(t, want.Interface(), got.Interface(), "%s into %v", raw, typ)
}

// TestDecodeStrict checks that a whole saved object decodes as it did when
// each member went to json.Unmarshal.
func TestDecodeStrict(t *testing.T) {
	for _, s := range []string{
		`{"s":"x","b":true,"i":-3,"i8":4,"u16":5,"u":6,"f32":1.5,"f":2.5,"d":1000,"t":"2026-11-26T03:30:00Z",
		  "pt":"2026-11-26T03:30:00Z","pi":7,"n":{"name":"n","when":"2026-11-26T03:30:00Z"},"pn":{"count":2},
		  "sn":[{"name":"a"},{"name":"b"}],"ss":["x"],"raw":{"a":[1]},"bytes":"aGk=","m":{"a":1},"a":[1,"x"],
		  "text":"t","arr":[1,2],"tagged":{"n":"3"},"embeds":{"name":"e","x":1},"named":"nm"}`,
		`{"n":{"NAME":"case"}}`, `{"pi":null,"pt":null,"sn":null,"n":null}`, `{"i":"x"}`, `{"n":{"count":"x"}}`,
		`{"t":"never"}`, `{"text":"bad"}`, `{"sn":[{"count":1},{"count":"x"}]}`,
	} {
		var got, want target
		err := decodeStrict([]byte(s), &got, "", nil)
		wantErr := referenceStrict([]byte(s), &want)
		if wantErr != nil {
			assert.EqualError(t, err, wantErr.Error(), s)
			continue
		}
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
}

// referenceStrict is decodeStrict as it was: each member into its field
// with json.Unmarshal.
func referenceStrict(data []byte, v any) error {
	ms, err := members(data)
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(v).Elem()
	fs := fieldsOf(rv.Type())
	for _, m := range ms {
		f, ok := fs.index[string(m.key)]
		if !ok {
			return fmt.Errorf("unknown field %q", m.key)
		}
		if err := json.Unmarshal(m.value, rv.Field(f.index).Addr().Interface()); err != nil {
			return fmt.Errorf("field %q: %w", m.key, err)
		}
	}
	return nil
}

var scanSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+10`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `tru`, `truex`, `nul`, `"\u12"`, `"\u12g4"`,
	`"\x"`, "\"\x01\"", "\"\x7f\xff\"", `[1,]`, `[,1]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":1 "b":2}`, ` [ 1 , 2 ] `,
	`[1] [2]`, `{"a":[{"b":{"c":[]}}]}`, `"\/\b\f\n\r\t\\\""`, `[true,false,null]`, `{"a":}`, `[`, `]`, ``, ` `,
}

// FuzzScan checks the scanner against json.Valid on any bytes.
func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}

func TestScan(t *testing.T) {
	for _, s := range scanSeeds {
		checkScan(t, []byte(s))
	}
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	checkScan(t, deep(maxDepth))
	checkScan(t, deep(maxDepth+1))
	assert.True(t, scanValid(deep(maxDepth)))
	assert.False(t, scanValid(deep(maxDepth+1)), "encoding/json's bound on nesting")
}

// scanValid reports whether the scanner takes data as one JSON value.
func scanValid(data []byte) bool {
	s := scanner{data: data}
	s.space()
	if !s.value(0) {
		return false
	}
	s.space()
	return s.i == len(data)
}

func checkScan(t *testing.T, data []byte) {
	t.Helper()
	assert.Equal(t, json.Valid(data), scanValid(data), "%q", data)
}

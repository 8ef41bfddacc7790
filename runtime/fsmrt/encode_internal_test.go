package fsmrt

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The encoders (encode.go) must encode as json.Marshal does, bytes and
// error alike. Beside the decoders' types (a field of each kind), these
// have methods json.Marshal calls or does not, omitempty on each kind, and
// the tags an encoder leaves to encoding/json.
type (
	encodeTarget struct {
		Target target         `json:"target"`
		Odd    odd            `json:"odd"`
		POdd   *odd           `json:"podd"`
		IOdd   any            `json:"iodd"`
		M      json.Marshaler `json:"m"`
		Ptr    ptrMarshaler   `json:"ptr"`
		Txt    textOut        `json:"txt"`
		OS     string         `json:"os,omitempty"`
		OI     int            `json:"oi,omitempty"`
		OU     uint8          `json:"ou,omitempty"`
		OB     bool           `json:"ob,omitempty"`
		OF     float64        `json:"of,omitempty"`
		OP     *int           `json:"op,omitempty"`
		OSl    []int          `json:"osl,omitempty"`
		OM     map[string]int `json:"om,omitempty"`
		OA     [0]int         `json:"oa,omitempty"`
		ON     nested         `json:"on,omitempty"`
		OT     time.Time      `json:"ot,omitempty"`
		Named  named          `json:",omitempty"`
		Dashed int            `json:"da-sh"`
	}
	// odd writes V as its JSON, whatever it is.
	odd struct{ V string }
	// ptrMarshaler's method is on its pointer: json.Marshal does not call
	// it on a value it cannot address.
	ptrMarshaler struct{ V string }
	textOut      struct{ V string }
	withOmitZero struct {
		T time.Time `json:"t,omitzero"`
	}
	withString struct {
		N int `json:"n,string"`
	}
)

var errOdd = errors.New("odd refuses")

func (o odd) MarshalJSON() ([]byte, error) {
	if o.V == "error" {
		return nil, errOdd
	}
	return []byte(o.V), nil
}

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"called"`), nil }

func (t textOut) MarshalText() ([]byte, error) { return []byte("text<" + t.V + ">"), nil }

// encoderTypes are the types FuzzEncode decodes every value into, then
// encodes.
var encoderTypes = func() []reflect.Type {
	// Two fields of one name (which encoding/json leaves out), made here:
	// go vet refuses them written down.
	withDup := reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		{Name: "C", Type: reflect.TypeFor[int](), Tag: `json:"c"`},
	})
	out := []reflect.Type{reflect.TypeFor[encodeTarget](), withDup, reflect.TypeFor[withOmitZero](), reflect.TypeFor[withString]()}
	for f := range reflect.TypeFor[encodeTarget]().Fields() {
		out = append(out, f.Type)
	}
	return append(out, decoderTypes...)
}()

var encodeSeeds = append([]string{
	`{"odd":{"V":"{\"a\":1}"},"os":"x","oi":1,"ou":2,"ob":true,"of":0.5,"op":0,"osl":[0],"om":{"a":0},"named":"n","da-sh":3}`,
	`{"odd":{"V":"{ \"a\" : 1 }"},"podd":{"V":"[1,2]"},"iodd":{"V":"1"}}`,
	`{"odd":{"V":"\"<&>\""}}`, `{"odd":{"V":"nul"}}`, `{"odd":{"V":"error"}}`, `{"odd":{"V":""}}`,
	`{"odd":{"V":"\"\u2028\""}}`, `{"odd":{"V":"\"a\\u0041\""}}`, `{"podd":null,"op":null}`,
	`{"os":"<script>","target":{"s":"tab\there","n":{"name":"é"}}}`, `{"os":"\u2029"}`, `{"os":"\u007f"}`,
	`{"ot":"2026-11-26T03:30:00Z","on":{"name":"x"}}`, `{"t":"2026-11-26T03:30:00.5+01:00"}`, `{"t":"0001-01-01T00:00:00Z"}`,
	`{"x":1,"c":2}`, `{"n":"5"}`, `{"ptr":{"V":"v"},"txt":{"V":"t"}}`,
	`{"target":{"f":1e21,"f32":1e-7,"d":-5,"m":{"b":1,"a":2},"a":{"k":[1,"x",null]},"bytes":"aGk=","raw":{"z":1},"embeds":{"name":"e","x":1}}}`,
}, decodeSeeds...)

// FuzzEncode checks each encoder against json.Marshal on values decoded
// from any JSON value.
func FuzzEncode(f *testing.F) {
	for _, s := range encodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range encoderTypes {
			checkEncoder(t, typ, data)
		}
	})
}

func TestEncode(t *testing.T) {
	t.Parallel()
	for _, s := range encodeSeeds {
		require.True(t, json.Valid([]byte(s)), s)
		for _, typ := range encoderTypes {
			checkEncoder(t, typ, []byte(s))
		}
	}
}

// checkEncoder decodes data into a value of typ (as far as json.Unmarshal
// goes) and checks that its encoder writes what json.Marshal does.
func checkEncoder(t *testing.T, typ reflect.Type, data []byte) {
	t.Helper()
	v := reflect.New(typ)
	_ = json.Unmarshal(data, v.Interface())
	value := v.Elem().Interface()
	want, wantErr := json.Marshal(value)
	got, err := appendJSON([]byte("prefix"), value)
	if wantErr != nil {
		require.Error(t, err, "%s as %v: json.Marshal fails", data, typ)
		assert.Equal(t, wantErr.Error(), err.Error(), "%s as %v", data, typ)
		return
	}
	require.NoError(t, err, "%s as %v", data, typ)
	assert.Equal(t, "prefix"+string(want), string(got), "%s as %v", data, typ)
}

// TestMarshalKind checks the kind's place and the fields' object.
func TestMarshalKind(t *testing.T) {
	t.Parallel()
	type fields struct {
		A int    `json:"a"`
		S string `json:"s,omitempty"`
	}
	for _, tc := range []struct {
		kind   string
		fields any
		want   string
	}{
		{"running", fields{A: 1, S: "x"}, `{"kind":"running","a":1,"s":"x"}`},
		{"idle", struct{}{}, `{"kind":"idle"}`},
		{"<odd>", fields{}, `{"kind":"\u003codd\u003e","a":0}`},
	} {
		got, err := MarshalKind(tc.kind, tc.fields)
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(got))
	}
	_, err := MarshalKind("list", []int{1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the fields of kind "list" encode as [1], not as an object`)
	_, err = MarshalKind("bad", odd{V: "error"})
	require.ErrorIs(t, err, errOdd)
}

// BenchmarkMarshalKind encodes a state like a server's job (settings, two
// times, a count) with its kind.
func BenchmarkMarshalKind(b *testing.B) {
	w, _ := newBenchState()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalKind("scheduled", w); err != nil {
			b.Fatal(err)
		}
	}
}

// newBenchState returns a value shaped like a job's scheduled state.
func newBenchState() (any, string) {
	type settings struct {
		Schedule struct {
			Type       string `json:"type"`
			Expression string `json:"expression,omitempty"`
			Seconds    int    `json:"seconds,omitempty"`
		} `json:"schedule"`
		Timezone    string        `json:"timezone"`
		Timeout     time.Duration `json:"timeout"`
		Retries     int           `json:"retries"`
		BackoffBase time.Duration `json:"backoff_base"`
		BackoffCap  time.Duration `json:"backoff_cap"`
		Overlap     string        `json:"overlap,omitempty"`
	}
	type scheduled struct {
		Settings settings  `json:"settings"`
		At       time.Time `json:"at"`
		Failures int       `json:"failures"`
		NextRun  time.Time `json:"next_run"`
	}
	var s scheduled
	s.Settings.Schedule.Type, s.Settings.Schedule.Expression = "cron", "0 3 1 1 *"
	s.Settings.Timezone, s.Settings.Timeout, s.Settings.Retries = "UTC", time.Hour, 3
	s.Settings.BackoffBase, s.Settings.BackoffCap = 5*time.Second, 5*time.Minute
	s.At = time.Date(2026, 12, 2, 3, 14, 22, 777874721, time.UTC)
	s.NextRun = time.Date(2027, 1, 1, 3, 0, 0, 0, time.UTC)
	want, _ := json.Marshal(s)
	return s, strings.TrimSpace(string(want))
}

package mcptools

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// key is a secret of these tests, with characters that URL escaping and
// base64 change; token a second one, as the sync token is.
const (
	key   = "sk-ant-api03-Test/Key+With=Marks_0123456789abcdefXYZ"
	token = "sync-token-0123456789abcdef-fedcba9876543210"
)

// TestCheckSecrets checks that no field of an entry may hold a secret of
// the session, in any encoding the redactor knows, and that the message
// names the field without showing the secret.
func TestCheckSecrets(t *testing.T) {
	t.Parallel()
	secrets := redact.New(key, token)
	encodings := []struct {
		name   string
		encode func(string) string
	}{
		{"raw", func(s string) string { return s }},
		{"in a bearer header", func(s string) string { return "Bearer " + s }},
		{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
		{"base64 url", func(s string) string { return base64.URLEncoding.EncodeToString([]byte("x" + s)) }},
		{"basic auth", func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+s)) }},
		{"url escaped", url.QueryEscape},
		{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
		{"reversed", func(s string) string {
			r := []rune(s)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return string(r)
		}},
		{"split over lines", func(s string) string { return s[:20] + "\n  " + s[20:] }},
		{"a piece", func(s string) string { return s[5:35] }},
	}
	entries := []struct {
		field string // in the message
		make  func(v string) Server
	}{
		{"its name", func(v string) Server { return Server{Name: v, URL: "http://127.0.0.1/"} }},
		{"command (the program)", func(v string) Server { return Server{Name: "s", Command: []string{v}} }},
		{"command argument 2", func(v string) Server { return Server{Name: "s", Command: []string{"srv", "--x", v}} }},
		{"a variable name of env", func(v string) Server {
			return Server{Name: "s", Command: []string{"srv"}, Env: map[string]string{v: "1"}}
		}},
		{"env LEAK", func(v string) Server {
			return Server{Name: "s", Command: []string{"srv"}, Env: map[string]string{"LEAK": v}}
		}},
		{"expose entry 1", func(v string) Server {
			return Server{Name: "s", Command: []string{"srv"}, Expose: []sandbox.Exposure{{Path: "~/" + v}}}
		}},
		{"url", func(v string) Server { return Server{Name: "s", URL: "https://mcp.example/?key=" + v} }},
		{"a header name of headers", func(v string) Server {
			return Server{Name: "s", URL: "http://127.0.0.1/", Headers: map[string]string{v: "1"}}
		}},
		{"headers Authorization", func(v string) Server {
			return Server{Name: "s", URL: "http://127.0.0.1/", Headers: map[string]string{"Authorization": v}}
		}},
		{"read_only_tools entry 2", func(v string) Server {
			return Server{Name: "s", URL: "http://127.0.0.1/", ReadOnlyTools: []string{"a", v}}
		}},
		{"a tool name of approve", func(v string) Server {
			return Server{Name: "s", URL: "http://127.0.0.1/", Approve: map[string]tools.Approval{v: tools.ApprovalNever}}
		}},
	}
	for _, e := range entries {
		for _, enc := range encodings {
			for _, secret := range []string{key, token} {
				t.Run(e.field+"/"+enc.name+"/"+secret[:4], func(t *testing.T) {
					t.Parallel()
					err := e.make(enc.encode(secret)).checkSecrets(secrets)
					require.Error(t, err)
					assert.Equal(t, e.field+" holds one of the agent's secrets (its API key, the sync token), which no MCP server may be given; remove it from the entry", err.Error())
				})
			}
		}
		t.Run(e.field+"/clean", func(t *testing.T) {
			t.Parallel()
			assert.NoError(t, e.make("harmless-value").checkSecrets(secrets))
		})
	}
	t.Run("split over two arguments", func(t *testing.T) {
		t.Parallel()
		s := Server{Name: "s", Command: []string{"srv", key[:15], key[15:30], key[30:]}}
		assert.EqualError(t, s.checkSecrets(secrets), "its fields, read one after the other, holds one of the agent's secrets (its API key, the sync token), which no MCP server may be given; remove it from the entry")
	})
	t.Run("split over two headers", func(t *testing.T) {
		t.Parallel()
		s := Server{Name: "s", URL: "http://127.0.0.1/", Headers: map[string]string{"X-A": key[:18], "X-B": key[18:36], "X-C": key[36:]}}
		assert.ErrorContains(t, s.checkSecrets(secrets), "its fields, read one after the other,")
	})
	t.Run("no secrets", func(t *testing.T) {
		t.Parallel()
		assert.NoError(t, entries[0].make(key).checkSecrets(redact.New()))
	})
}

// TestCheckSecretsEveryField sets every text an entry can hold, found by
// reflection (strings, lists of them, maps' keys and values, the fields
// of structs in lists), to the key in turn: each is refused. A field added
// to Server and forgotten by fields fails here.
func TestCheckSecretsEveryField(t *testing.T) {
	t.Parallel()
	secrets := redact.New(key)
	typ := reflect.TypeFor[Server]()
	n := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		for j, set := range setters(f.Type, key) {
			n++
			t.Run(fmt.Sprintf("%s/%d", f.Name, j), func(t *testing.T) {
				var s Server
				set(reflect.ValueOf(&s).Elem().Field(i))
				assert.Error(t, s.checkSecrets(secrets), "%+v", s)
			})
		}
	}
	assert.GreaterOrEqual(t, n, 11, "every text of an entry is tried")
}

// setters returns the ways to put v in a value of type typ: one for each
// text it can hold.
func setters(typ reflect.Type, v string) []func(reflect.Value) {
	switch typ.Kind() {
	case reflect.String:
		return []func(reflect.Value){func(x reflect.Value) { x.SetString(v) }}
	case reflect.Slice:
		var out []func(reflect.Value)
		for _, set := range setters(typ.Elem(), v) {
			out = append(out, func(x reflect.Value) {
				x.Set(reflect.MakeSlice(typ, 1, 1))
				set(x.Index(0))
			})
		}
		return out
	case reflect.Map:
		var out []func(reflect.Value)
		for _, set := range setters(typ.Key(), v) {
			out = append(out, func(x reflect.Value) {
				k := reflect.New(typ.Key()).Elem()
				set(k)
				x.Set(reflect.MakeMap(typ))
				x.SetMapIndex(k, reflect.New(typ.Elem()).Elem())
			})
		}
		for _, set := range setters(typ.Elem(), v) {
			out = append(out, func(x reflect.Value) {
				e := reflect.New(typ.Elem()).Elem()
				set(e)
				x.Set(reflect.MakeMap(typ))
				x.SetMapIndex(reflect.ValueOf("k").Convert(typ.Key()), e)
			})
		}
		return out
	case reflect.Struct:
		var out []func(reflect.Value)
		for i := range typ.NumField() {
			for _, set := range setters(typ.Field(i).Type, v) {
				out = append(out, func(x reflect.Value) { set(x.Field(i)) })
			}
		}
		return out
	}
	return nil
}

// TestStartRefusesSecretsBeforeSending starts an HTTP server's entry
// whose header holds the key: it is refused, and the server is never
// reached.
func TestStartRefusesSecretsBeforeSending(t *testing.T) {
	t.Parallel()
	reached := make(chan string, 10)
	srv := newCountingServer(t, reached)
	_, errs := Start(t.Context(), []Server{{Name: "leaky", URL: srv, Headers: map[string]string{"Authorization": "Bearer " + key}}},
		Options{Secrets: redact.New(key)})
	require.Len(t, errs, 1)
	assert.EqualError(t, errs[0], `MCP server "leaky": headers Authorization holds one of the agent's secrets (its API key, the sync token), which no MCP server may be given; remove it from the entry`)
	assert.NotContains(t, errs[0].Error(), key)
	select {
	case r := <-reached:
		t.Fatalf("the server was reached: %s", r)
	default:
	}
}

// newCountingServer returns the URL of a loopback HTTP server that tells
// reached of every request it gets, and answers 404.
func newCountingServer(t *testing.T, reached chan<- string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.Method + " " + r.URL.String()
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

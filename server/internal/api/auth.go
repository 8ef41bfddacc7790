package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/apikey"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

// keyContext is the context key of the request's API key.
type keyContext struct{}

// requestKey returns the API key a request authenticated with (auth put
// it in the request's context).
func requestKey(r *http.Request) *store.Key {
	k, _ := r.Context().Value(keyContext{}).(*store.Key)
	return k
}

// auth requires a valid API key: of any scope for GET and HEAD (reads),
// read-write or admin for the other methods (writes).
func (s *Server) auth(next http.HandlerFunc) http.HandlerFunc { return s.authScope("", next) }

// admin requires an admin key.
func (s *Server) admin(next http.HandlerFunc) http.HandlerFunc {
	return s.authScope(apikey.ScopeAdmin, next)
}

// authScope requires a valid API key of scope need, or of the scope the
// method needs when need is empty, and passes it on in the request's
// context. The key is read from the store (through s.keys, which trusts
// what it read for apikey.TTL), so a key revoked on any instance is
// refused here within that time.
func (s *Server) authScope(need string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110, section 11.1).
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		token = strings.TrimLeft(token, " ")
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fsmgen"`)
			writeError(w, &monitorengine.Error{Status: 401, Code: "unauthorized", Message: "the API needs an API key: send Authorization: Bearer <token> (the server printed the admin key's token on its first start)"})
			return
		}
		k, err := s.keys.Check(r.Context(), token)
		if err != nil {
			s.log.Error("the API keys could not be read", "method", r.Method, "path", r.URL.Path, "err", err)
			w.Header().Set("Retry-After", "1")
			writeError(w, &monitorengine.Error{Status: 503, Code: "store_unavailable", Message: "the API keys could not be read (see the server's log): retry"})
			return
		}
		if k == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fsmgen", error="invalid_token"`)
			writeError(w, &monitorengine.Error{Status: 401, Code: "invalid_token", Message: "the token is not one of this server's API keys"})
			return
		}
		if !k.RevokedAt.IsZero() {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fsmgen", error="invalid_token"`)
			writeError(w, &monitorengine.Error{Status: 401, Code: "invalid_token", Message: fmt.Sprintf("the API key %q (%s) was revoked at %s: use another key", k.Name, k.ID, k.RevokedAt.UTC().Format(time.RFC3339))})
			return
		}
		need := need // one route serves several methods
		if need == "" {
			need = apikey.ScopeReadWrite
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				need = apikey.ScopeReadOnly
			}
		}
		if !apikey.Allows(k.Scope, need) {
			e := &monitorengine.Error{Status: 403, Code: "read_only_key", Message: fmt.Sprintf("the API key %q (%s) is read-only: %s %s needs a read-write or admin key", k.Name, k.ID, r.Method, r.URL.Path)}
			if need == apikey.ScopeAdmin {
				e.Code, e.Message = "admin_key_required", fmt.Sprintf("the API key %q (%s) is %s: the API keys are managed with an admin key", k.Name, k.ID, k.Scope)
			}
			writeError(w, e)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), keyContext{}, k)))
	}
}

package api

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/server/internal/apikey"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

// maxKeyName is the longest name of an API key, in characters.
const maxKeyName = 100

// KeyView is an API key as the API shows it: never its token, but in the
// answer to its creation.
type KeyView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Scope      string     `json:"scope"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// Token is set once: in the answer that created the key.
	Token string `json:"token,omitempty"`
}

func keyView(k *store.Key) KeyView {
	v := KeyView{ID: k.ID, Name: k.Name, Scope: k.Scope, CreatedAt: k.CreatedAt.UTC()}
	if !k.LastUsedAt.IsZero() {
		t := k.LastUsedAt.UTC()
		v.LastUsedAt = &t
	}
	if !k.RevokedAt.IsZero() {
		t := k.RevokedAt.UTC()
		v.RevokedAt = &t
	}
	return v
}

// listKeys answers GET /api/keys: every key, the revoked ones too, the
// oldest first.
func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Keys(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	views := make([]KeyView, len(list))
	for i, k := range list {
		views[i] = keyView(k)
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": views})
}

// KeyInput is the body of POST /api/keys.
type KeyInput struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
}

// createKey answers POST /api/keys: a new key, with its token, shown
// this once.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request) {
	var in KeyInput
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "":
		s.fail(w, r, badRequest("invalid_name", `name: give the key a name that says who uses it, as in "ci" or "laptop agent"`))
		return
	case utf8.RuneCountInString(name) > maxKeyName:
		s.fail(w, r, badRequest("invalid_name", "name: at most %d characters, not %d", maxKeyName, utf8.RuneCountInString(name)))
		return
	case strings.ContainsFunc(name, unicode.IsControl):
		s.fail(w, r, badRequest("invalid_name", "name %q holds a control character: give one line of text", name))
		return
	case !apikey.Valid(in.Scope):
		s.fail(w, r, badRequest("invalid_scope", "scope %q: give %s", in.Scope, strings.Join(apikey.Scopes, ", ")))
		return
	}
	token, k := apikey.Make(apikey.NewID(), name, in.Scope, s.now().UTC().Truncate(time.Microsecond))
	added, err := s.store.AddKey(r.Context(), k)
	if err == nil && !added {
		err = fmt.Errorf("a key of the new ID %s exists", k.ID)
	}
	if err != nil {
		s.log.Error("an API key could not be stored", "key", k.ID, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, &monitorengine.Error{Status: 503, Code: "store_unavailable", Message: "the key could not be stored (see the server's log): retry"})
		return
	}
	v := keyView(k)
	v.Token = token
	w.Header().Set("Location", "/api/keys/"+k.ID)
	writeJSON(w, http.StatusCreated, v)
}

// revokeKey answers DELETE /api/keys/{id}: the key is revoked (again: it
// stays revoked at its first revocation) and answered as it is now.
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	k, err := s.store.RevokeKey(r.Context(), id, s.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		s.log.Error("an API key could not be revoked", "key", id, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, &monitorengine.Error{Status: 503, Code: "store_unavailable", Message: "the key could not be revoked (see the server's log): retry"})
		return
	}
	if k == nil {
		s.fail(w, r, &monitorengine.Error{Status: 404, Code: "not_found", Message: fmt.Sprintf("no API key %q: GET /api/keys lists them", id)})
		return
	}
	// Refused here at once; the other instances within apikey.TTL.
	s.keys.Forget(k.Hash)
	writeJSON(w, http.StatusOK, keyView(k))
}

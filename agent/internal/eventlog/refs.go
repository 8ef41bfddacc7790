package eventlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// RefPolicy says which parts of the actions a session records by
// reference rather than whole (see the package doc). The writer and the
// replay apply the same policy, the one in the session's header, so a
// reference recorded is compared with the reference computed from the
// replayed action.
type RefPolicy struct {
	// Fields lists, for an action kind (the action's "kind" member), the
	// members recorded by reference, each as a dotted path from the action
	// object, e.g. "request.messages". A path the action does not have is
	// skipped.
	Fields map[string][]string `json:"fields,omitempty"`
	// MaxBytes is the longest action, in bytes of compact JSON once Fields
	// are applied, recorded whole; a longer one is recorded by reference,
	// keeping only its kind. 0 means no limit.
	MaxBytes int `json:"max_bytes,omitempty"`
}

// RefKey is the member that marks a JSON object of the log as a reference:
// it holds "sha256:" and the hex SHA-256 of the value's compact JSON.
const RefKey = "$digest"

// refPrefix starts the value of RefKey.
const refPrefix = "sha256:"

// check reports the first malformed path of the policy.
func (p RefPolicy) check() error {
	if p.MaxBytes < 0 {
		return fmt.Errorf("max_bytes is %d: it must be 0 (no limit) or more", p.MaxBytes)
	}
	for kind, paths := range p.Fields {
		if kind == "" {
			return errors.New("a field list has an empty action kind")
		}
		for _, path := range paths {
			if slices.Contains(strings.Split(path, "."), "") {
				return fmt.Errorf("action %s: path %q has an empty member name", kind, path)
			}
		}
	}
	return nil
}

// Reduce returns the form of action the log holds under p: its compact
// JSON (with <, > and & escaped, as json.Marshal writes them) with the
// members p.Fields names for its kind replaced by references, and the
// whole action replaced by a reference (keeping its kind) when it is
// still longer than p.MaxBytes. What is a reference already stays as it
// is, so reducing twice gives what reducing once does, and a log can be
// copied through a Writer. An action that is not JSON is an error.
func (p RefPolicy) Reduce(action json.RawMessage) (json.RawMessage, error) {
	var compact, buf bytes.Buffer
	if err := json.Compact(&compact, action); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if compact.Len() == 0 {
		return nil, errors.New("not JSON: empty")
	}
	json.HTMLEscape(&buf, compact.Bytes()) // as json.Marshal writes it in the line
	b := buf.Bytes()
	kind, hasKind := kindMember(b)
	if hasKind {
		if paths := p.Fields[unquote(kind)]; len(paths) > 0 {
			for _, path := range paths {
				b = referAt(b, strings.Split(path, "."))
			}
		}
	}
	if _, whole := member(b, RefKey); p.MaxBytes > 0 && len(b) > p.MaxBytes && !whole {
		ref := refOf(b)
		if hasKind {
			whole := make([]byte, 0, len(ref)+len(kind)+9)
			whole = append(whole, `{"kind":`...)
			whole = append(whole, kind...)
			whole = append(whole, ',')
			ref = append(whole, ref[1:]...)
		}
		b = ref
	}
	return b, nil
}

// referAt returns obj, compact JSON, with the member at path replaced by
// its reference; obj itself when it has no such member.
func referAt(obj []byte, path []string) []byte {
	if len(obj) == 0 || obj[0] != '{' {
		return obj
	}
	for key, val := range members(obj) {
		if unquote(key) != path[0] {
			continue
		}
		var repl []byte
		if len(path) == 1 {
			if _, _, _, ok := isRef(val); ok {
				return obj
			}
			repl = refOf(val)
		} else {
			repl = referAt(val, path[1:])
		}
		start := offset(obj, val)
		out := make([]byte, 0, len(obj)-len(val)+len(repl))
		out = append(out, obj[:start]...)
		out = append(out, repl...)
		return append(out, obj[start+len(val):]...)
	}
	return obj
}

// offset returns where sub, a subslice of b, starts in b.
func offset(b, sub []byte) int {
	return cap(b) - cap(sub)
}

// refOf returns the reference that stands for v, compact JSON:
// {"$digest":"sha256:…","bytes":N} with "count" for an array's elements.
func refOf(v []byte) []byte {
	sum := sha256.Sum256(v)
	out := make([]byte, 0, 128)
	out = append(out, `{"`+RefKey+`":"`+refPrefix...)
	out = hex.AppendEncode(out, sum[:])
	out = append(out, `","bytes":`...)
	out = strconv.AppendInt(out, int64(len(v)), 10)
	if len(v) > 0 && v[0] == '[' {
		n := 0
		for range elements(v) {
			n++
		}
		out = append(out, `,"count":`...)
		out = strconv.AppendInt(out, int64(n), 10)
	}
	return append(out, '}')
}

// The functions below read compact, valid JSON (json.Compact's output),
// which holds no whitespace between tokens. They never index out of
// bounds, whatever they are given: on malformed input they stop early.

// skip returns the index just past the JSON value that starts at b[i].
func skip(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skip(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default: // a number, true, false or null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
}

// members yields the members of the object obj: each key (quoted, as
// written) and value, as subslices of obj.
func members(obj []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		if len(obj) < 2 || obj[0] != '{' || obj[1] == '}' {
			return
		}
		for i := 1; i < len(obj); {
			k := skip(obj, i)
			if k >= len(obj) || obj[k] != ':' {
				return
			}
			v := skip(obj, k+1)
			if !yield(obj[i:k], obj[k+1:v]) || v >= len(obj) || obj[v] != ',' {
				return
			}
			i = v + 1
		}
	}
}

// elements yields the elements of the array arr, as subslices of arr.
func elements(arr []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if len(arr) < 2 || arr[0] != '[' || arr[1] == ']' {
			return
		}
		for i := 1; i < len(arr); {
			v := skip(arr, i)
			if !yield(arr[i:v]) || v >= len(arr) || arr[v] != ',' {
				return
			}
			i = v + 1
		}
	}
}

// member returns the value of the member key of obj.
func member(obj []byte, key string) ([]byte, bool) {
	for k, v := range members(obj) {
		if unquote(k) == key {
			return v, true
		}
	}
	return nil, false
}

// kindMember returns the "kind" member of obj, quoted, when obj is an
// object whose kind is a string.
func kindMember(obj []byte) ([]byte, bool) {
	v, ok := member(obj, "kind")
	if !ok || len(v) == 0 || v[0] != '"' {
		return nil, false
	}
	return v, true
}

// unquote returns the text of the JSON string s.
func unquote(s []byte) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1])
	}
	var out string
	if json.Unmarshal(s, &out) != nil {
		return string(s)
	}
	return out
}

// isRef reports whether v is a reference — an object whose RefKey member
// is "sha256:" and 64 hex digits —, and returns its parts.
func isRef(v []byte) (digest string, size, count int64, ok bool) {
	if len(v) == 0 || v[0] != '{' {
		return "", 0, 0, false
	}
	count = -1
	for k, x := range members(v) {
		switch unquote(k) {
		case RefKey:
			d, found := strings.CutPrefix(unquote(x), refPrefix)
			if !found || len(d) != chainHexLen || strings.Trim(d, "0123456789abcdef") != "" {
				return "", 0, 0, false
			}
			digest = d
		case "bytes":
			size, _ = strconv.ParseInt(string(x), 10, 64)
		case "count":
			count, _ = strconv.ParseInt(string(x), 10, 64)
		}
	}
	return digest, size, count, digest != ""
}

// describe renders a value of a reduced action for a person: a reference
// as its count, size and digest, anything else as its JSON (cut short).
func describe(v []byte) string {
	if v == nil {
		return "(absent)"
	}
	if digest, size, count, ok := isRef(v); ok {
		var b strings.Builder
		switch {
		case count == 1:
			b.WriteString("1 element, ")
		case count >= 0:
			fmt.Fprintf(&b, "%d elements, ", count)
		}
		fmt.Fprintf(&b, "%d bytes, sha256 %s", size, short(digest))
		return b.String()
	}
	return string(v)
}

// short returns the first 12 characters of a digest, marked as cut.
func short(digest string) string {
	if len(digest) <= 12 {
		return digest
	}
	return digest[:12] + "…"
}

// firstDiff returns where want and got, compact JSON values that differ,
// first differ: the dotted path from them (empty for the values
// themselves) and the two values there, nil for a member or an element
// that one of them lacks. A reference, and objects of different kinds,
// are compared as a whole.
func firstDiff(want, got []byte) (path string, w, g []byte) {
	_, _, _, wantRef := isRef(want)
	_, _, _, gotRef := isRef(got)
	switch {
	case wantRef || gotRef || len(want) == 0 || len(got) == 0 || want[0] != got[0]:
		return "", want, got
	case want[0] == '{':
		wk, _ := kindMember(want)
		gk, _ := kindMember(got)
		if !bytes.Equal(wk, gk) { // values of different kinds differ as a whole
			return "", want, got
		}
		for k, wv := range members(want) {
			gv, ok := member(got, unquote(k))
			if !ok {
				return unquote(k), wv, nil
			}
			if !bytes.Equal(wv, gv) {
				p, w, g := firstDiff(wv, gv)
				return join(unquote(k), p), w, g
			}
		}
		for k, gv := range members(got) {
			if _, ok := member(want, unquote(k)); !ok {
				return unquote(k), nil, gv
			}
		}
	case want[0] == '[':
		var ws, gs [][]byte
		for v := range elements(want) {
			ws = append(ws, v)
		}
		for v := range elements(got) {
			gs = append(gs, v)
		}
		for i := range max(len(ws), len(gs)) {
			idx := "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(gs):
				return idx, ws[i], nil
			case i >= len(ws):
				return idx, nil, gs[i]
			case !bytes.Equal(ws[i], gs[i]):
				p, w, g := firstDiff(ws[i], gs[i])
				return joinIndex(idx, p), w, g
			}
		}
	}
	return "", want, got
}

// join appends the path p to the member name k.
func join(k, p string) string {
	switch {
	case p == "":
		return k
	case p[0] == '[':
		return k + p
	}
	return k + "." + p
}

// joinIndex appends the path p to the index idx.
func joinIndex(idx, p string) string {
	if p == "" || p[0] == '[' {
		return idx + p
	}
	return idx + "." + p
}

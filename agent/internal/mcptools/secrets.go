package mcptools

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// field is one text of a server's entry, named for messages as the
// config file names it.
type field struct {
	name, value string
	key         bool // a map's key: a variable's, a header's or a tool's name
}

// fields returns every text of the entry: its name, its command and
// arguments, its env's names and values, its exposed paths, its URL, its
// headers' names and values, and the tool names of read_only_tools and
// approve (and its values). A name that could be the secret itself (an env variable's, a
// header's, a tool's) is named by where it is, never quoted.
func (s Server) fields() []field {
	out := []field{{name: "its name", value: s.Name}}
	for i, a := range s.Command {
		if i == 0 {
			out = append(out, field{name: "command (the program)", value: a})
			continue
		}
		out = append(out, field{name: fmt.Sprintf("command argument %d", i), value: a})
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		out = append(out, field{"a variable name of env", k, true}, field{"env " + safeName(k), s.Env[k], false})
	}
	for i, e := range s.Expose {
		out = append(out, field{name: fmt.Sprintf("expose entry %d", i+1), value: e.Path})
	}
	out = append(out, field{name: "url", value: s.URL})
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		out = append(out, field{"a header name of headers", k, true}, field{"headers " + safeName(k), s.Headers[k], false})
	}
	for i, t := range s.ReadOnlyTools {
		out = append(out, field{name: fmt.Sprintf("read_only_tools entry %d", i+1), value: t})
	}
	for _, k := range slices.Sorted(maps.Keys(s.Approve)) {
		out = append(out, field{"a tool name of approve", k, true}, field{"a value of approve", string(s.Approve[k]), false})
	}
	return out
}

// safeName returns a variable's or header's name for a message: the
// name, or where it is when it is long enough to be a piece of a secret
// (the redactor catches a piece of MinRun characters; a name that long is
// not quoted, whether it holds one or not).
func safeName(k string) string {
	if len(k) >= redact.MinRun {
		return fmt.Sprintf("(its name of %d characters)", len(k))
	}
	return k
}

// checkSecrets refuses the entry when one of its fields holds one of the
// session's secrets (the API keys, the sync token), raw or in any
// encoding the redactor knows (base64, hex, URL escaping, reversed, cut
// by whitespace, a piece of redact.MinRun characters or more), and when
// its values, read one after the other, do (a secret cut in pieces over
// arguments or header values). Nothing of an entry that fails is sent or
// started: one rule for every field, whether it goes to a command (its
// arguments, env) or over the network (its URL, headers).
func (s Server) checkSecrets(secrets *redact.Redactor) error {
	if secrets.Empty() {
		return nil
	}
	fields := s.fields()
	var all strings.Builder
	for _, f := range fields {
		if secrets.ContainsString(f.value) {
			return secretError(f.name)
		}
		if !f.key {
			all.WriteString(f.value)
		}
	}
	if secrets.ContainsString(all.String()) {
		return secretError("its fields, read one after the other,")
	}
	return nil
}

// secretError is the refusal of an entry whose field where holds a secret.
func secretError(where string) error {
	return fmt.Errorf("%s holds one of the agent's secrets (its API key, the sync token), which no MCP server may be given; remove it from the entry", where)
}

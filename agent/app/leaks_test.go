package app

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// keyLeaks returns the pieces of testKey that text holds, whitespace
// ignored: any redact.MinRun characters of it, raw or reversed, and the
// hexadecimal, base64 and base32 of any redact.MinRun of its bytes, at
// every alignment (less a character at each end). It is the tests' own
// account of what must never leave the agent, written apart from the
// redactor. JSON's escapes of whitespace count as whitespace: text may be
// a request's body or a saved file.
func keyLeaks(text string) []string {
	text = strings.NewReplacer(`\n`, " ", `\r`, " ", `\t`, " ").Replace(text)
	flat := strings.Join(strings.Fields(text), "")
	var found []string
	look := func(what, piece string) {
		if strings.Contains(flat, piece) {
			found = append(found, what)
		}
	}
	for i := 0; i+redact.MinRun <= len(testKey); i++ {
		piece := testKey[i : i+redact.MinRun]
		look("raw", piece)
		r := []byte(piece)
		slices.Reverse(r)
		look("reversed", string(r))
		look("hex", hex.EncodeToString([]byte(piece)))
		for pad := range 3 {
			e := base64.StdEncoding.EncodeToString(append(make([]byte, pad), piece...))
			look("base64", e[pad+1:len(e)-2])
		}
		for pad := range 5 {
			e := strings.TrimRight(base32.StdEncoding.EncodeToString(append(make([]byte, pad), piece...)), "=")
			look("base32", e[2*pad+1:len(e)-2])
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// checkNoKeyForm fails when a file of the threads directory (threads,
// event logs) holds testKey in any form keyLeaks knows.
func (e *env) checkNoKeyForm(t *testing.T) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(e.threads, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Empty(t, keyLeaks(string(b)), "%s holds the API key", p)
	}
}

// TestEncodedKeyNeverLeaves has the model's commands print the API key
// encoded as issue 20 item 3 found them getting through — base64 wrapped
// at 76 columns, xxd -p, od, base32, rev, a slice — and write two of them
// to files: none reaches the model, the screen, the thread, the event
// log or a commit, and the files are left out of the commit and named.
//
// The commands put the key together from two halves shorter than
// redact.MinRun, which pass as they are: the key needs to be in no file
// of the workspace (where the agent may hide it from the tools).
func TestEncodedKeyNeverLeaves(t *testing.T) {
	t.Parallel()
	half := len(testKey) / 2
	require.Less(t, len(testKey)-half, redact.MinRun)
	key := fmt.Sprintf(`k=$(printf '%%s%%s' '%s' '%s'); printf '# the keys of this project\nANTHROPIC_API_KEY=%%s\n' "$k"`, testKey[:half], testKey[half:])
	commands := map[string]string{
		"base64": key + " | base64",
		"xxd":    key + " | xxd -p",
		"od":     key + " | od -An -tx1",
		"base32": key + " | base32",
		"rev":    key + " | rev",
		"slice":  key + " | tail -1 | cut -c21-46",
		"files":  key + " | base64 > enc_b64.txt; " + key + " | xxd -p > enc_hex.txt; echo written",
	}
	var calls []fakellm.ToolCall
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range commands {
			if !yield(n) {
				return
			}
		}
	}) {
		calls = append(calls, bashCall(t, "c_"+name, commands[name]))
	}
	e := newEnv(t, fakellm.Anthropic, map[string]string{".gitignore": ".env\n"},
		fakellm.Reply{Text: "Encoding it.", ToolCalls: calls},
		fakellm.Reply{Text: "Done."})
	r := e.run(t, "", "-p", "Encode the key.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)

	// The commands did print the key: the files hold it.
	for _, f := range []string{"enc_b64.txt", "enc_hex.txt"} {
		require.NotEmpty(t, keyLeaks(gittest.ReadFile(t, e.ws, f)), "%s holds the key's encoding", f)
	}
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	results := resultsOf(reqs[1])
	require.Len(t, results, len(commands))
	for _, res := range results {
		assert.NotEqual(t, strings.TrimSpace(res[strings.Index(res, ":")+1:]), "", "a result is empty: %q", res)
	}
	for i, req := range reqs {
		assert.Empty(t, keyLeaks(string(req.Body)), "request %d", i)
	}
	assert.Empty(t, keyLeaks(r.stdout), "stdout")
	assert.Empty(t, keyLeaks(r.stderr), "stderr")
	e.checkNoKeyForm(t)

	assert.Contains(t, r.stderr, "! not committed: enc_b64.txt, enc_hex.txt — they hold a secret")
	assert.Empty(t, gittest.Git(t, e.ws, "ls-files", "enc_b64.txt", "enc_hex.txt"))
	assert.Empty(t, keyLeaks(gittest.Git(t, e.ws, "log", "--all", "-p")), "the history")
}

// TestKeyInToolNameRedacted has the model call a tool whose name holds
// the API key (issue 20 item 6): the name is redacted before the screen,
// the commit message, the thread, the event log or the next request sees
// it.
func TestKeyInToolNameRedacted(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, nil,
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{
					{ID: "c1", Name: "edit_file", Args: `{"path":"a.txt","old_str":"","new_str":"a\n"}`},
					{ID: "c2", Name: "run_" + testKey, Args: `{}`},
					{ID: "id_" + testKey, Name: "list_files", Args: `{}`},
				}},
				fakellm.Reply{Text: "Done."})
			r := e.run(t, "", "-p", "Go.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "run_"+redact.Mark)
			assert.NotContains(t, r.stderr+r.stdout, testKey)
			assert.Contains(t, gittest.Git(t, e.ws, "log", "-1", "--format=%B"), "Tools: edit_file ×1, run_"+redact.Mark+" ×1 (1 failed)")
			assert.NotContains(t, gittest.Git(t, e.ws, "log", "--all", "--format=%B"), testKey)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			assert.NotContains(t, string(reqs[1].Body), testKey)
			e.checkNoSecret(t)
		})
	}
}

package app

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestCustomCommands runs a session whose project and user have custom
// slash commands: /help lists them with their first lines; a command
// sends its text with the arguments put in; the project's command takes
// the place of the user's of the same name, saying so; a name that is a
// built-in's or no command's, a link out of the folder, a FIFO and a
// file past the size limit are refused with a note, and the session goes
// on.
func TestCustomCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{
		".agent/commands/fix.md":      "# Fix a file\nFix $1 ($ARGUMENTS); leave $2 alone.\n",
		".agent/commands/review.md":   "Review the project's changes.\n",
		".agent/commands/Bad_Name.md": "x\n",
		".agent/commands/big.md":      strings.Repeat("x", maxCommandBytes+1),
		".agent/commands/notes.txt":   "not a command\n",
	}, fakellm.Reply{Text: "Fixed."}, fakellm.Reply{Text: "Reviewed."}, fakellm.Reply{Text: "Hello."})
	user := filepath.Join(e.configHome(), configDirName, "commands")
	require.NoError(t, os.MkdirAll(user, 0o755))
	for name, text := range map[string]string{
		"review.md": "Review the user's way.\n",
		"greet.md":  "\n\nSay hello.\n",
		"help.md":   "Not the built-in.\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(user, name), []byte(text), 0o644))
	}
	outside := filepath.Join(t.TempDir(), "secret.md")
	require.NoError(t, os.WriteFile(outside, []byte("outside\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(e.ws, ".agent/commands/link.md")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(e.ws, ".agent/commands/fifo.md"), 0o644))

	r := e.run(t, "/help\n/fix a.go quickly\n/review\n/greet extra words\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, []string{
		"# Fix a file\nFix a.go (a.go quickly); leave quickly alone.",
		"Review the project's changes.",
		"Say hello.\n\nextra words",
	}, userMessages(e))
	for _, want := range []string{
		"custom commands (.agent/commands/*.md, and yours; their text is sent to the model):",
		"agent: custom commands: /review is the project's .agent/commands/review.md, not your ",
		"agent: custom commands: .agent/commands/Bad_Name.md is not used: a command's name is lower-case letters",
		"/help is a built-in command; rename the file",
		"agent: custom commands: .agent/commands/big.md is not used: it has 32769 bytes, past the limit of 32768",
		"agent: custom commands: .agent/commands/link.md is not used: path \".agent/commands/link.md\" leads outside the workspace",
		"agent: custom commands: .agent/commands/fifo.md is not used: \".agent/commands/fifo.md\" is a named pipe (FIFO), not a regular file",
		"/fix: sending .agent/commands/fix.md to the model (2 lines)",
	} {
		assert.Contains(t, r.stderr, want)
	}
	// Listed by name, each with its first line and whose it is.
	help := r.stderr[strings.Index(r.stderr, "custom commands ("):strings.Index(r.stderr, "keys:")]
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(help), "\n")[1:] {
		listed = append(listed, strings.Join(strings.Fields(l), " "))
	}
	assert.Equal(t, []string{
		"/fix [args] Fix a file (the project's)",
		"/greet [args] Say hello. (the user's)",
		"/review [args] Review the project's changes. (the project's)",
	}, listed)
	assert.NotContains(t, r.stderr, "notes")
	assert.Equal(t, 1, strings.Count(r.stderr, "  /help "), "the built-in /help, once")
}

// TestCustomCommandOneShot runs a custom command as -p's prompt: its text
// is sent, the arguments put in.
func TestCustomCommandOneShot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.OpenAI, map[string]string{".agent/commands/review.md": "Review $ARGUMENTS for bugs."},
		fakellm.Reply{Text: "No bugs."})
	r := e.run(t, "", "-p", "/review src/a.go")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "No bugs.\n", r.stdout)
	assert.Equal(t, []string{"Review src/a.go for bugs."}, userMessages(e))
	assert.Contains(t, r.stderr, "agent: /review: sending .agent/commands/review.md to the model")
}

// TestCustomCommandNotesOnce: what the agent says of the custom commands'
// files is said once a run, not again when /fork goes on in a new session.
func TestCustomCommandNotesOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{".agent/commands/help.md": "x"}, fakellm.Reply{Text: "One."})
	r := e.run(t, "First.\n/fork\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "resumed (", "a second session")
	assert.Equal(t, 1, strings.Count(r.stderr, "/help is a built-in command"), r.stderr)
}

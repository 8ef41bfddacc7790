package app

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/hooks"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/termtext"
)

// The values of -hooks: whose hooks run.
const (
	hooksAll  = "all"  // the user's and the project's
	hooksUser = "user" // the user's only
	hooksOff  = "off"  // none
)

// hooksModes are the values -hooks takes.
var hooksModes = []string{hooksAll, hooksUser, hooksOff}

// userHooksFile is the user's hooks file and how messages name it; ""
// when there is no config directory.
func userHooksFile() (file, label string) {
	dir, label := userCommandsDir() // the config directory's "commands"
	if dir == "" {
		return "", ""
	}
	return filepath.Join(filepath.Dir(dir), "hooks.yaml"), strings.TrimSuffix(label, "commands") + "hooks.yaml"
}

// loadHooks reads the hooks -hooks asks for (a file that cannot be read
// or parsed stops the agent, exit 2, naming FILE:LINE:COL), says at start
// which run and where (once a run: not again on /fork, /resume, /model),
// and makes what runs them: bash's sandbox for the hooks of the calls
// that may change the workspace, the same read-only for the others and
// for the turn's end.
func (s *agentSession) loadHooks(ctx context.Context) error {
	o := s.o
	if o.hooks == hooksOff {
		return nil
	}
	file, label := userHooksFile()
	hs, err := hooks.Load(ctx, s.ws, file, label, o.hooks == hooksAll)
	if err != nil {
		s.notef("%v; fix it, or run with -hooks %s or -hooks %s", err, hooksUser, hooksOff)
		return exitCode(exitUsage)
	}
	if len(hs) == 0 {
		return nil
	}
	ro := s.sandbox
	if s.sandbox.Confined() && !s.sandbox.ReadOnlyWorkspace() {
		opt := s.sandboxOpt
		opt.ReadOnlyWorkspace = true
		if ro, err = sandbox.New(ctx, opt); err != nil {
			return fmt.Errorf("the read-only sandbox of the hooks: %w", err)
		}
	}
	s.hooks = &hooks.Runner{Hooks: hs, Workspace: s.ws, Sandbox: s.sandbox, ReadOnly: ro,
		GitGuard: s.guard, Redactor: s.secrets, Session: s.thread.ID}
	note := hooksBanner(hs, s.sandbox)
	if s.in == nil || s.in.once(note) {
		fmt.Fprint(s.stderr, note)
	}
	return nil
}

// hooksBanner says which hooks run, file by file, each with its command,
// and where they run; or that they cannot run, and what that means.
func hooksBanner(hs []hooks.Hook, sb *sandbox.Sandbox) string {
	var b strings.Builder
	var files []string
	byFile := map[string][]string{}
	for _, h := range hs {
		f, _, _ := strings.Cut(h.Source, ":")
		if _, ok := byFile[f]; !ok {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], h.String())
	}
	where := "in the sandbox, as bash's commands"
	if !sb.Confined() || sb.Disabled() != nil {
		where = "NOT RUN: hooks run only in the sandbox, which is off or unavailable; a pre_tool hook then refuses the calls it matches"
	}
	for _, f := range files {
		fmt.Fprintf(&b, "agent: hooks of %s (%s): %s\n", f, where, strings.Join(byFile[f], "; "))
	}
	return b.String()
}

// checkHooks checks -hooks.
func checkHooks(v string) error {
	if !slices.Contains(hooksModes, v) {
		return fmt.Errorf("-hooks %q: use %s", v, strings.Join(hooksModes, ", "))
	}
	return nil
}

// HookRan implements agentexec.HookDisplay: what a turn_end hook gave,
// its first line and the last lines of its output.
func (t *terminal) HookRan(r hooks.Report) {
	t.events.hookRan(r)
	mark, how := t.paint(sgrGreen, "✓"), "ok"
	if r.Err != nil {
		mark, how = t.paint(sgrRed, "✗"), r.Err.Error()
	}
	t.line(fmt.Sprintf("  %s hook %s %s: %s", mark, r.Hook.Event, termtext.Sanitize(fmt.Sprintf("%q", short(r.Hook.Command, 60))), termtext.Sanitize(how)))
	out := strings.TrimSpace(termtext.Sanitize(r.Output))
	if out == "" || out == "(no output)" {
		return
	}
	all := lines(out)
	if !t.verbose && len(all) > tailLines {
		t.line(fmt.Sprintf("    … %d earlier lines hidden", len(all)-tailLines))
		all = all[len(all)-tailLines:]
	}
	for _, l := range all {
		t.line("    " + l)
	}
}

// evHook is the type of the JSON event of a turn_end hook.
const evHook = "hook"

// hookEvent is a turn_end hook's end, as -json prints it.
type hookEvent struct {
	Type    string `json:"type"`
	Event   string `json:"event"`
	Command string `json:"command"`
	Source  string `json:"source"`
	Error   string `json:"error,omitempty"`
	Output  string `json:"output,omitempty"`
}

// hookRan writes a turn_end hook's event.
func (j *jsonEvents) hookRan(r hooks.Report) {
	if j == nil {
		return
	}
	e := hookEvent{Type: evHook, Event: string(r.Hook.Event), Command: r.Hook.Command, Source: r.Hook.Source, Output: r.Output}
	if r.Err != nil {
		e.Error = r.Err.Error()
	}
	j.emit(e)
}

// splitHookReports splits a call's result into the tool's own output and
// the reports of its hooks appended to it (see agentexec.HookRefusedPrefix
// and hooks.Report.String), each of which starts a line with
// "[pre_tool hook " or "[post_tool hook ".
func splitHookReports(content string) (own, reports string) {
	i := -1
	for _, ev := range []hooks.Event{hooks.PreTool, hooks.PostTool} {
		if j := strings.Index(content, "\n["+string(ev)+" hook "); j >= 0 && (i < 0 || j < i) {
			i = j
		}
	}
	if i < 0 {
		return content, ""
	}
	return content[:i], content[i+1:]
}

// hookReports shows the reports of a call's hooks under its result: each
// report's first line, and the last lines of its output.
func (t *terminal) hookReports(reports string) {
	if reports == "" {
		return
	}
	var block []string
	flush := func() {
		if len(block) == 0 {
			return
		}
		t.line("    " + block[0])
		out := block[1:]
		if len(out) > tailLines {
			t.line(fmt.Sprintf("      … %d earlier lines hidden; /expand shows them", len(out)-tailLines))
			out = out[len(out)-tailLines:]
		}
		if len(out) > 0 {
			t.line("      " + t.paint(sgrDim, strings.Join(out, "\n      ")))
		}
		block = block[:0]
	}
	for _, l := range lines(reports) {
		if strings.HasPrefix(l, "["+string(hooks.PreTool)+" hook ") || strings.HasPrefix(l, "["+string(hooks.PostTool)+" hook ") {
			flush()
		}
		block = append(block, l)
	}
	flush()
}

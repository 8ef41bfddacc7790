package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// ToolRunner runs one tool call to completion (a *tools.Set is one): the
// queries that concern files run through the agent's own tools, so that
// they reach files only beneath the workspace and never a masked one.
type ToolRunner interface {
	Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome
}

// Call returns the tool call that answers q, named id: read_file,
// list_files or search_files; false for the queries of facts
// (environment, project), which [Facts] answers.
func Call(q chat.Query, id string) (chat.ToolCall, bool) {
	var name string
	args := map[string]string{}
	switch q.Kind {
	case chat.QueryRead:
		name, args["path"] = "read_file", q.Path
	case chat.QueryList:
		name = "list_files"
		if q.Path != "" {
			args["path"] = q.Path
		}
	case chat.QuerySearch:
		name, args["pattern"] = "search_files", q.Pattern
		if q.Path != "" {
			args["path"] = q.Path
		}
	default:
		return chat.ToolCall{}, false
	}
	raw, _ := json.Marshal(args) // a map of strings always encodes
	return chat.ToolCall{ID: id, Name: name, Arguments: raw}, true
}

// Facts answers the queries of facts. The zero value works: it looks at
// the process's environment and the workspace Workspace.
type Facts struct {
	// Workspace is the workspace's root directory.
	Workspace string
	// Tools reads the project's build files (read_file), so that a file
	// masked from the tools stays masked; nil reads none.
	Tools ToolRunner
	// Environ returns the environment; nil means os.Environ.
	Environ func() []string
	// LookPath finds a program; nil means the Look of the sandbox's
	// resolver (see agent/internal/progpath), or without a sandbox, of one made
	// from the environment's PATH and the workspace: a toolchain is never
	// found in a directory the model's commands can write.
	LookPath func(string) (string, error)
	// VersionTimeout bounds each toolchain's version command; 0 means 3s.
	VersionTimeout time.Duration
	// Sandbox, when it confines commands, runs the toolchains' version
	// commands as it runs bash's. Without it (nil, disabled or off) they
	// run unconfined, and the facts say so. Either way they run from /,
	// never the workspace, with the variables that redirect toolchains
	// left out (see prober): a workspace's rust-toolchain.toml, go.mod
	// toolchain line, .tool-versions and the like choose nothing.
	Sandbox *sandbox.Sandbox
}

// Run answers q: read, list and search run as a tool call through tools,
// environment and project facts are gathered by f. The outcome is for the
// model; the caller redacts it as any tool's.
func Run(ctx context.Context, tools ToolRunner, f Facts, q chat.Query, id string, progress func(chat.ToolProgress)) chat.ToolOutcome {
	if call, ok := Call(q, id); ok {
		return tools.Run(ctx, call, progress)
	}
	switch q.Kind {
	case chat.QueryEnvironment:
		return chat.ToolOutcome{Content: f.Environment(ctx)}
	case chat.QueryProject:
		return chat.ToolOutcome{Content: f.Project(ctx)}
	}
	return chat.ToolOutcome{IsError: true, Content: fmt.Sprintf("unknown query %q; ask one of read, list, search, environment, project", q.Kind)}
}

// secretName matches the names of environment variables that look like
// they hold a secret; the environment query leaves them out.
var secretName = regexp.MustCompile(`(?i)KEY|TOKEN|SECRET|PASS|CRED|AUTH|COOKIE|SESSION|PRIVATE|SIGN|CERT|DSN|SALT|BEARER|OAUTH|JWT|WEBHOOK`)

// toolchains are the programs whose versions the environment query
// reports, and the arguments that print them.
var toolchains = []struct {
	name string
	args []string
}{
	{"go", []string{"version"}},
	{"git", []string{"--version"}},
	{"make", []string{"--version"}},
	{"gcc", []string{"--version"}},
	{"node", []string{"--version"}},
	{"python3", []string{"--version"}},
	{"rustc", []string{"--version"}},
	{"cargo", []string{"--version"}},
	{"java", []string{"-version"}},
}

// Environment describes the environment: the operating system and
// architecture, the shell, the workspace, the toolchains found and their
// versions, and the names (never the values) of the environment's
// variables, those that look secret left out.
func (f Facts) Environment(ctx context.Context) string {
	environ, look := f.Environ, f.LookPath
	if environ == nil {
		environ = os.Environ
	}
	programs := f.programs()
	if look == nil {
		look = programs.Look
	}
	var b strings.Builder
	osLine := runtime.GOOS + " (" + runtime.GOARCH + ")"
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		osLine += ", kernel " + strings.TrimSpace(string(rel))
	}
	fmt.Fprintf(&b, "operating system: %s\n", osLine)
	vars := map[string]string{}
	var names []string
	hidden := 0
	for _, kv := range environ() {
		name, value, _ := strings.Cut(kv, "=")
		if name == "" {
			continue
		}
		vars[name] = value
		if secretName.MatchString(name) {
			hidden++
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	shell := vars["SHELL"]
	if shell == "" {
		shell = "unknown ($SHELL is not set)"
	}
	fmt.Fprintf(&b, "shell: %s\n", shell)
	if f.Workspace != "" {
		fmt.Fprintf(&b, "workspace: %s\n", f.Workspace)
	}
	probe, how := f.prober(programs)
	b.WriteString(how)
	for _, tc := range toolchains {
		p, err := look(tc.name)
		if err != nil {
			fmt.Fprintf(&b, "  %s: not found\n", tc.name)
			continue
		}
		fmt.Fprintf(&b, "  %s: %s (%s)\n", tc.name, probe.version(ctx, p, tc.args), p)
	}
	b.WriteString("environment variables (names only")
	if hidden > 0 {
		fmt.Fprintf(&b, "; %d that look secret are left out", hidden)
	}
	fmt.Fprintf(&b, "): %s", strings.Join(names, ", "))
	return b.String()
}

// buildFiles are the files that say what kind of project a directory
// holds, and the kind.
var buildFiles = []struct{ name, kind string }{
	{"go.mod", "Go module"},
	{"Cargo.toml", "Rust crate (Cargo)"},
	{"package.json", "JavaScript/TypeScript package (npm)"},
	{"pyproject.toml", "Python project"},
	{"setup.py", "Python project (setuptools)"},
	{"requirements.txt", "Python requirements"},
	{"pom.xml", "Java project (Maven)"},
	{"build.gradle", "Java/Kotlin project (Gradle)"},
	{"build.gradle.kts", "Kotlin project (Gradle)"},
	{"Gemfile", "Ruby project (Bundler)"},
	{"composer.json", "PHP project (Composer)"},
	{"CMakeLists.txt", "C/C++ project (CMake)"},
	{"Makefile", "make"},
	{"justfile", "just"},
	{"Dockerfile", "Docker image"},
	{"docker-compose.yml", "Docker Compose"},
}

// Project describes the project in the workspace: its root, its git
// branch, the kinds of project its build files say (with a Go module's
// path and Go version, read through the tools), and its top-level
// entries.
func (f Facts) Project(ctx context.Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace: %s\n", f.Workspace)
	fmt.Fprintf(&b, "git branch: %s\n", gitBranch(f.Workspace))
	entries, err := os.ReadDir(f.Workspace)
	if err != nil {
		fmt.Fprintf(&b, "top-level entries: unreadable (%v)", err)
		return b.String()
	}
	have := map[string]bool{}
	var top []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		have[e.Name()] = true
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		top = append(top, n)
	}
	var kinds []string
	for _, bf := range buildFiles {
		if !have[bf.name] {
			continue
		}
		k := bf.kind + " (" + bf.name + ")"
		if bf.name == "go.mod" && f.Tools != nil {
			k += goModule(ctx, f.Tools)
		}
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		kinds = []string{"none recognised"}
	}
	fmt.Fprintf(&b, "build files: %s\n", strings.Join(kinds, "; "))
	fmt.Fprintf(&b, "top-level entries: %s", strings.Join(top, " "))
	return b.String()
}

// goModule returns ": module M, go V" from go.mod, read with read_file.
func goModule(ctx context.Context, tools ToolRunner) string {
	call, _ := Call(chat.Query{Kind: chat.QueryRead, Path: "go.mod"}, "project-go-mod")
	out := tools.Run(ctx, call, nil)
	if out.IsError {
		return ""
	}
	var mod, gov string
	for _, line := range strings.Split(out.Content, "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 2 && fields[0] == "module":
			mod = fields[1]
		case len(fields) == 2 && fields[0] == "go":
			gov = fields[1]
		}
	}
	if mod == "" {
		return ""
	}
	s := ": module " + mod
	if gov != "" {
		s += ", go " + gov
	}
	return s
}

// gitBranch returns the branch checked out in the workspace's git
// repository, as its HEAD says.
func gitBranch(ws string) string {
	gitDir := filepath.Join(ws, ".git")
	if b, err := os.ReadFile(gitDir); err == nil { // a worktree or a submodule: "gitdir: PATH"
		if p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(ws, p)
			}
			gitDir = p
		}
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "none (not a git repository)"
	}
	head = bytes.TrimSpace(head)
	if ref, ok := bytes.CutPrefix(head, []byte("ref: refs/heads/")); ok {
		return string(ref)
	}
	if len(head) > 12 {
		head = head[:12]
	}
	return "detached at " + string(head)
}

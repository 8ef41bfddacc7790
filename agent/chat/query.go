package chat

// QueryKind says what a [Query] asks for.
type QueryKind string

// The kinds of queries a model without tool calling can ask in its reply.
const (
	// QueryRead asks for a file's contents (Path).
	QueryRead QueryKind = "read"
	// QueryList asks for the files under a directory (Path; "" or "." for
	// the workspace root).
	QueryList QueryKind = "list"
	// QuerySearch asks where a text (Pattern) occurs in the files under a
	// directory (Path; "" for the whole workspace).
	QuerySearch QueryKind = "search"
	// QueryEnvironment asks for facts about the environment the agent runs
	// in: operating system, shell, toolchains, variable names.
	QueryEnvironment QueryKind = "environment"
	// QueryProject asks for facts about the project: its kind (Go module,
	// npm package, ...), build files, git branch.
	QueryProject QueryKind = "project"
)

// Query is what a model that cannot call tools asked for in the text of
// its reply, as a detection strategy (agent/internal/query) recognised it: the
// agent runs it through its tools and sends the result back as a message.
type Query struct {
	// Kind says what is asked for.
	Kind QueryKind `json:"kind"`
	// Path is the file (read) or directory (list, search) the query is
	// about, relative to the workspace root.
	Path string `json:"path,omitempty"`
	// Pattern is the text a search looks for.
	Pattern string `json:"pattern,omitempty"`
}

// String describes the query in a few words, e.g. "read src/main.rs" or
// `search "TODO" in src`.
func (q Query) String() string {
	switch q.Kind {
	case QueryRead:
		return "read " + q.Path
	case QueryList:
		if q.Path == "" {
			return "list ."
		}
		return "list " + q.Path
	case QuerySearch:
		s := "search " + quote(q.Pattern)
		if q.Path != "" && q.Path != "." {
			s += " in " + q.Path
		}
		return s
	}
	return string(q.Kind)
}

// quote returns s in double quotes, its own double quotes and backslashes
// escaped.
func quote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(append(b, '"'))
}

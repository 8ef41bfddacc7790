package query

import (
	"regexp"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// The protocol of ProtocolHelp.
var (
	protocolLine = regexp.MustCompile(`(?i)^(?:[-*>]\s*)?\[?QUERY\]?\s*:\s*([a-z_]+)\b\s*(.*?)\s*$`)
	protocolTag  = regexp.MustCompile(`(?i)<query\b([^>]*?)/?>`)
	tagAttr      = regexp.MustCompile(`(\w+)\s*=\s*"([^"]*)"`)
)

// ProtocolHelp is what the system prompt of a model without tool calling
// says about asking queries.
const ProtocolHelp = `You cannot call tools. Instead, when you need to see something of the workspace or the environment, write one query on a line of its own and stop; the agent runs it and sends you the result in the next message, marked as the query's result:
QUERY: read PATH               the contents of a file
QUERY: list [DIR]              the files under a directory (default: the workspace root)
QUERY: search PATTERN [in DIR] the lines where a text occurs
QUERY: environment             the operating system, shell, toolchains and environment variable names
QUERY: project                 the kind of project, its build files and its git branch
Ask one query at a time and wait for its result; do not guess what a file holds. Paths are relative to the workspace root.`

// isProtocolLine reports whether line is a query of the protocol.
func isProtocolLine(line string) bool {
	if !strings.Contains(line, "uery") && !strings.Contains(line, "UERY") {
		return false
	}
	m := protocolLine.FindStringSubmatch(line)
	return m != nil && kindOf(m[1]) != ""
}

// kindOf returns the kind a protocol's word names, or "".
func kindOf(w string) chat.QueryKind {
	switch strings.ToLower(w) {
	case "read", "read_file", "cat", "open":
		return chat.QueryRead
	case "list", "ls", "list_files", "tree":
		return chat.QueryList
	case "search", "grep", "find", "search_files":
		return chat.QuerySearch
	case "environment", "env":
		return chat.QueryEnvironment
	case "project":
		return chat.QueryProject
	}
	return ""
}

// parseProtocol returns the query of a protocol line or tag.
func parseProtocol(s string) (chat.Query, bool) {
	if !strings.Contains(s, "uery") && !strings.Contains(s, "UERY") {
		return chat.Query{}, false // neither a line nor a tag: spare the expressions
	}
	if m := protocolTag.FindStringSubmatch(s); m != nil {
		attrs := map[string]string{}
		for _, a := range tagAttr.FindAllStringSubmatch(m[1], -1) {
			attrs[strings.ToLower(a[1])] = a[2]
		}
		return build(kindOf(attrs["kind"]), attrs["path"], attrs["pattern"])
	}
	m := protocolLine.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return chat.Query{}, false
	}
	kind, rest := kindOf(m[1]), unquote(m[2])
	if kind == chat.QuerySearch {
		pattern, dir := rest, ""
		if i := strings.LastIndex(m[2], " in "); i >= 0 {
			pattern, dir = unquote(m[2][:i]), unquote(m[2][i+4:])
		}
		return build(kind, dir, pattern)
	}
	return build(kind, rest, "")
}

// build returns the query of a kind and its arguments, false when it lacks
// one it needs.
func build(kind chat.QueryKind, p, pattern string) (chat.Query, bool) {
	p = strings.TrimPrefix(p, "./")
	if p != "/" {
		p = strings.TrimRight(p, "/")
	}
	switch kind {
	case chat.QueryRead:
		return chat.Query{Kind: kind, Path: p}, p != ""
	case chat.QueryList:
		if p == "" {
			p = "."
		}
		return chat.Query{Kind: kind, Path: p}, true
	case chat.QuerySearch:
		return chat.Query{Kind: kind, Path: p, Pattern: pattern}, pattern != ""
	case chat.QueryEnvironment, chat.QueryProject:
		return chat.Query{Kind: kind}, true
	}
	return chat.Query{}, false
}

// unquote trims white space, and the quotes or backquotes around s.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '`' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

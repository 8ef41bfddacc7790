package query

import (
	"path"
	"regexp"
	"strings"
	"unicode"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// The cues the classifier of [Phrases] weighs, as lower-case phrases
// matched on word boundaries.
var (
	// intentCues say that the model wants something now.
	intentCues = []string{
		"i need to", "i'll need", "i will need", "i need", "need to", "we need", "still need", "i also need", "i'd need", "i first need",
		"let me", "let's", "i want to", "i want", "i'd like", "i would like", "i'd love to",
		"i'll", "i will", "i'm going to", "i am going to", "i'm gonna", "i have to", "i must",
		"i should", "allow me to", "show me", "give me", "please", "can i see", "may i see",
		"could i see", "can i get", "first, i", "i'd first", "now i'll", "next, i'll",
		"can you", "could you", "would you", "will you",
	}
	// userQuestions put a question to the user, not to the agent.
	userQuestions = []string{
		"do you want", "would you like", "should i", "shall i", "want me to", "do you",
		"are you", "is that ok", "is that okay", "does that make", "does this make", "does that work",
		"does this work", "did you",
		"have you", "can you confirm", "could you confirm", "let me know",
	}
	// vetoes mark a sentence that does not ask: the past, advice to the
	// user, hypotheticals, negations, examples.
	vetoes = []string{
		"after reading", "having read", "having looked", "based on", "as shown", "as you can see",
		"according to", "i didn't", "i did not", "i don't need", "i do not need", "no need to",
		"don't need to", "not need to", "without reading", "without looking", "for example", "e.g",
		"such as", "you can", "you could", "you should", "you'll", "you will", "you might", "you may",
		"you need", "you'd", "if you", "i could", "we could", "i might", "we might", "maybe",
		"perhaps", "i can't", "i cannot", "i can not", "unable to", "have access", "no access",
		"i won't", "i will not", "never", "in the future", "next time", "it would", "that would",
		"this would", "i can see", "i see that", "i noticed", "let me know", "let me explain",
		"let me summarize", "let me summarise", "was able to", "were able to", "would you like",
		"do you want", "want me to", "should i", "shall i", "show you", "walk you through",
	}
	// leadingVetoes start a conditional or a narration of the past.
	leadingVetoes = []string{"if ", "once ", "when ", "whenever ", "after ", "unless ", "looking at ", "reading "}
	// readVerbs ask for a file's contents.
	readVerbs = []string{
		"read", "reading", "open", "opening", "showing", "look at", "looking at", "take a look", "have a look",
		"a look at", "see", "view", "show", "check", "checking", "inspect", "inspecting", "examine",
		"examining", "review", "reviewing", "contents of", "content of", "cat", "print", "what's in",
		"what is in", "what's inside", "what does", "peek", "study", "go through", "look into",
		"load", "full text", "source of", "code in", "code of",
	}
	// editVerbs plan a change; one before any read verb makes the sentence
	// a plan ("I'll add a test in x_test.go to check ..."), not a request.
	editVerbs = []string{
		"add", "adding", "update", "updating", "change", "changing", "modify", "modifying", "fix",
		"fixing", "edit", "editing", "create", "creating", "write", "writing", "remove", "removing",
		"delete", "deleting", "rename", "renaming", "refactor", "refactoring", "implement",
		"implementing", "replace", "replacing", "move", "moving", "insert", "patch", "append", "rewrite",
	}
	// listVerbs ask for the files of a directory.
	listVerbs = []string{
		"list", "listing", "ls", "what files", "which files", "files are in", "files in", "files under",
		"structure", "layout", "tree", "explore", "overview of the", "what's in the", "what is in the",
		"contents of the", "directories", "subdirectories", "folders", "what's there",
	}
	// searchVerbs ask where a text occurs.
	searchVerbs = []string{
		"search", "searching", "grep", "look for", "looking for", "find where", "find all", "find every",
		"find the definition", "find occurrences", "find usages", "find references", "find out where",
		"where is", "where's", "where are", "occurrences of", "usages of", "references to", "uses of",
		"calls to", "defined", "declared", "is used", "are used", "is called", "is implemented",
	}
	// envCues ask for facts of the environment.
	envCues = []string{
		"environment", "env var", "env vars", "operating system", "which os", "what os", "os version",
		"shell", "toolchain", "go version", "version of go", "installed", "platform", "architecture",
		"system info", "system information", "path variable", "runtime version", "node version",
		"python version", "rust version", "compiler version", "which compiler", "cpu",
	}
	// projectCues ask for facts of the project.
	projectCues = []string{
		"kind of project", "type of project", "project type", "project facts", "project info",
		"project details", "about the project", "about this project", "project setup",
		"which language", "what language", "programming language", "build system", "module name",
		"module path", "git branch", "which branch", "what branch", "current branch", "the branch",
		"dependencies", "project metadata", "what framework", "which framework", "package manager",
	}
	// pronouns stand for the last file the reply named.
	pronouns = []string{"it", "that file", "this file", "the file", "its contents", "that one"}
)

// pastTense is the first person in the past tense ("I read", "we
// searched"), which narrates and does not ask.
var pastTense = regexp.MustCompile(`\b(i|we)('ve| have| had|'d)?( already| just| now)? (read|opened|looked|listed|searched|checked|viewed|examined|inspected|reviewed|saw|seen|found|grepped|scanned|went|noticed|noted|updated|changed|modified|edited|created|wrote|added|fixed|ran|tried)\b`)

// clauseBreak separates the clauses of a sentence.
var clauseBreak = regexp.MustCompile(`,\s+|;\s+|\s+but\s+|\s+and then\s+|\s+so\s+|\s+and now\s+`)

// presentClauses returns s without its clauses in the past tense ("I read
// src/a.go, but I need to see src/b.go" asks for src/b.go), and whether it
// dropped any.
func presentClauses(s string) (string, bool) {
	if !inPast(strings.ToLower(s)) {
		return s, false
	}
	var keep []string
	last := 0
	for _, m := range append(clauseBreak.FindAllStringIndex(s, -1), []int{len(s), len(s)}) {
		c := s[last:m[0]]
		last = m[1]
		if !pastTense.MatchString(strings.ToLower(c)) {
			keep = append(keep, c)
		}
	}
	return strings.Join(keep, ", "), true
}

// inPast reports whether the lower-case text speaks in the first person
// in the past tense; the words "i" or "we" must be there first, which
// spares most sentences the expression.
func inPast(lower string) bool {
	return (hasPhrase(lower, "i") || hasPhrase(lower, "we")) && pastTense.MatchString(lower)
}

// conditionalI is "I would" or "I'd" not followed by a wish ("I would
// like", "I'd need"), a hypothetical.
var conditionalI = regexp.MustCompile(`\bi(?: would|'d) (\w+)`)

// hasAny reports whether s holds one of the phrases on word boundaries.
func hasAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if hasPhrase(s, p) {
			return true
		}
	}
	return false
}

// firstOf returns where the first of the phrases occurs in s on word
// boundaries, or -1.
func firstOf(s string, phrases []string) int {
	first := -1
	for _, p := range phrases {
		for off := 0; ; {
			i := strings.Index(s[off:], p)
			if i < 0 {
				break
			}
			i += off
			j := i + len(p)
			if (i == 0 || !isWordByte(s[i-1])) && (j == len(s) || !isWordByte(s[j])) {
				if first < 0 || i < first {
					first = i
				}
				break
			}
			off = i + 1
		}
	}
	return first
}

// plansEdit reports whether the lower-case sentence, from its intent on
// ("To fix this, I need to read ..." asks), names a change before it names
// anything to read: a plan, not a request.
func plansEdit(lower string) bool {
	if i := firstOf(lower, intentCues); i > 0 {
		lower = lower[i:]
	}
	e := firstOf(lower, editVerbs)
	if e < 0 {
		return false
	}
	r := firstOf(lower, readVerbs)
	return r < 0 || e < r
}

// hasPhrase reports whether s holds p, neither preceded nor followed by a
// letter or a digit.
func hasPhrase(s, p string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], p)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(p)
		if (i == 0 || !isWordByte(s[i-1])) && (j == len(s) || !isWordByte(s[j])) {
			return true
		}
		off = i + 1
	}
}

// isWordByte reports whether b is a letter, a digit or an underscore (or
// part of a multi-byte character).
func isWordByte(b byte) bool {
	return b == '_' || b >= 0x80 || unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b))
}

// hasIntent reports whether the lower-case sentence wants something now: an
// intent cue, or a question not put to the user.
func hasIntent(lower string) bool {
	if strings.HasSuffix(strings.TrimRight(lower, " )\"'`*_"), "?") && !hasAny(lower, userQuestions) {
		return true
	}
	return hasAny(lower, intentCues)
}

// vetoed reports whether the lower-case sentence has a cue that it does
// not ask anything.
func vetoed(lower string) bool {
	if hasAny(lower, vetoes) || inPast(lower) {
		return true
	}
	for _, m := range conditionalI.FindAllStringSubmatch(lower, -1) {
		switch m[1] {
		case "like", "love", "need", "first", "want":
		default:
			return true
		}
	}
	for _, p := range leadingVetoes {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}

// target is a path or a quoted text of a sentence.
type target struct {
	text   string // as written, without quotes and trailing punctuation
	pos    int    // where it starts in the sentence
	quoted bool   // in backquotes or double quotes
	file   bool   // names a file
	dir    bool   // names a directory
}

// knownExts are the extensions that make a word a file name.
var knownExts = setOf("go", "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "yaml", "yml",
	"toml", "md", "txt", "c", "h", "cc", "cpp", "hpp", "java", "kt", "rb", "sh", "bash", "zsh", "mod",
	"sum", "lock", "cfg", "ini", "conf", "html", "css", "scss", "sql", "proto", "xml", "gradle",
	"swift", "cs", "php", "lua", "zig", "vue", "svelte", "log", "csv", "env", "tf", "mk", "cmake",
	"rst", "tmpl", "tpl", "graphql", "ex", "exs", "erl", "hs", "ml", "scala", "dart", "pl", "r")

// knownNames are file names without a known extension, as projects write
// them.
var knownNames = setOf("Makefile", "Dockerfile", "README", "LICENSE", "Gemfile", "Rakefile", "Procfile",
	"Justfile", "justfile", "Jenkinsfile", "Vagrantfile", "Containerfile", "CHANGELOG", "GNUmakefile", "makefile")

// notFiles are names of things written like files.
var notFiles = setOf("node.js", "next.js", "vue.js", "react.js", "express.js", "three.js", "d3.js",
	"chart.js", "nuxt.js", "asp.net", "ecmascript.js")

// dirWords follow a directory's name ("the src directory").
var dirWords = setOf("directory", "folder", "dir", "package", "subdirectory")

// notDirNames are words before a directory word that name no directory.
var notDirNames = setOf("the", "this", "that", "a", "an", "same", "whole", "entire", "parent",
	"following", "each", "every", "any", "project", "working", "my", "your", "its", "our", "which",
	"what", "new", "other", "right", "correct")

// rootDirNames before a directory word name the workspace root.
var rootDirNames = setOf("root", "current", "top-level", "top", "workspace", "repository", "repo")

// setOf returns the set of words.
func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// quotedRe matches a text in backquotes or double quotes.
var quotedRe = regexp.MustCompile("`([^`\n]+)`|\"([^\"\n]+)\"")

// targetsOf returns the paths and quoted texts of the sentence s, in order.
func targetsOf(s string) []target {
	var ts []target
	masked := []byte(s)
	for _, m := range quotedRe.FindAllStringSubmatchIndex(s, -1) {
		a, b := m[2], m[3]
		if a < 0 {
			a, b = m[4], m[5]
		}
		t := target{text: strings.TrimSpace(s[a:b]), pos: a, quoted: true}
		classifyPath(&t)
		ts = append(ts, t)
		for i := m[0]; i < m[1]; i++ {
			masked[i] = ' '
		}
	}
	words := fieldsAt(string(masked))
	for k, w := range words {
		tok := strings.Trim(w.text, ",;:()[]{}<>'\"*_")
		tok = strings.TrimRight(tok, ".?!,;:")
		if tok == "" {
			continue
		}
		t := target{text: tok, pos: w.pos}
		classifyPath(&t)
		if !t.file && !t.dir && k+1 < len(words) {
			next := strings.ToLower(strings.Trim(words[k+1].text, ",.;:?!"))
			low := strings.ToLower(tok)
			switch {
			case !dirWords[next] || notDirNames[low]:
			case rootDirNames[low]:
				t.text, t.dir = ".", true
			case isIdent(tok):
				t.dir = true
			}
		}
		if t.file || t.dir {
			ts = append(ts, t)
		}
	}
	// In the sentence's order.
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].pos < ts[j-1].pos; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
	return ts
}

// word is a field of a sentence and where it starts.
type word struct {
	text string
	pos  int
}

// fieldsAt splits s at white space, keeping where each field starts.
func fieldsAt(s string) []word {
	var ws []word
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' {
			if start >= 0 {
				ws = append(ws, word{s[start:i], start})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return ws
}

// isIdent reports whether s could name a directory: letters, digits, -, _
// and no more.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

// classifyPath says whether t names a file or a directory, and cleans its
// text.
func classifyPath(t *target) {
	s := t.text
	if s == "" || strings.ContainsAny(s, " \t()=;,{}<>|$") || strings.Contains(s, "://") || strings.HasPrefix(s, "-") {
		return
	}
	if s == "." || s == "./" {
		t.text, t.dir = ".", true
		return
	}
	if notFiles[strings.ToLower(s)] {
		return
	}
	clean := strings.TrimPrefix(s, "./")
	if strings.HasSuffix(clean, "/") {
		clean = strings.TrimRight(clean, "/")
		if clean != "" && hasLetter(clean) {
			t.text, t.dir = clean, true
		}
		return
	}
	base := path.Base(clean)
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(base), "."))
	switch {
	case knownNames[base], knownExts[ext] && len(base) > len(ext)+1:
		t.text, t.file = clean, true
	case strings.HasPrefix(base, ".") && len(base) > 1 && hasLetter(base):
		t.text, t.file = clean, true // a dotfile: .gitignore, .env.example
	case strings.Contains(clean, "/") && hasLetter(clean) && !strings.HasPrefix(clean, "/"):
		t.text = clean
		t.file = path.Ext(base) != ""
		t.dir = !t.file // src/cmd, and sadly and/or too
	}
}

// hasLetter reports whether s has a letter.
func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}

// firstFile returns the first file the targets name, or "".
func firstFile(ts []target) string {
	for _, t := range ts {
		if t.file {
			return t.text
		}
	}
	return ""
}

// lastFileOf returns the last file the targets name, or "".
func lastFileOf(ts []target) string {
	f := ""
	for _, t := range ts {
		if t.file {
			f = t.text
		}
	}
	return f
}

// firstDir returns the first directory the targets name, or "".
func firstDir(ts []target) string {
	for _, t := range ts {
		if t.dir {
			return t.text
		}
	}
	return ""
}

// patternAnchors come before the pattern of a search written without
// quotes.
var patternAnchors = []string{"search for ", "searching for ", "look for ", "looking for ", "grep for ",
	"grep ", "find all ", "find every ", "occurrences of ", "usages of ", "references to ", "uses of ",
	"calls to ", "where is ", "where's ", "where are ", "find where ", "out where ", "see where ", "where "}

// patternSkips are words between an anchor and the pattern.
var patternSkips = setOf("the", "a", "an", "all", "any", "every", "occurrences", "usages", "references",
	"uses", "of", "calls", "to", "instances", "mentions", "where", "is", "are", "for", "function", "method",
	"type", "struct", "variable", "constant", "class", "symbol", "definition", "interface")

// codeWords after a plain word make it a name in code ("the main
// function").
var codeWords = setOf("function", "func", "method", "struct", "type", "variable", "class", "constant",
	"symbol", "interface", "macro", "trait", "enum", "field", "calls", "definition", "module")

// searchOf returns the pattern and the directory of a search the sentence
// asks; pattern "" when it names none.
func searchOf(s, lower string, ts []target) (pattern, dir string) {
	pos := -1
	for _, t := range ts {
		if t.quoted && !t.dir && !(t.file && strings.Contains(t.text, "/")) {
			pattern, pos = t.text, t.pos
			break
		}
	}
	if pattern == "" {
		pattern, pos = plainPattern(s, lower)
	}
	if pattern == "" {
		return "", ""
	}
	// " in DIR" after the pattern.
	if i := strings.Index(lower[pos:], " in "); i >= 0 {
		at := pos + i
		for _, t := range ts {
			if t.pos > at && (t.dir || t.file) && t.text != pattern {
				return pattern, t.text
			}
		}
	}
	return pattern, ""
}

// plainPattern returns the pattern of a search written without quotes,
// and where it starts: the word after an anchor ("search for X", "where
// X is defined") that looks like a name in code (camelCase, snake_case,
// ALL CAPS, a call), or any word that a word of code follows ("the main
// function").
func plainPattern(s, lower string) (string, int) {
	for _, a := range patternAnchors {
		i := strings.Index(lower, a)
		if i < 0 || (i > 0 && isWordByte(lower[i-1])) {
			continue
		}
		ws := fieldsAt(s[i+len(a):])
		for k, w := range ws {
			tok := strings.Trim(w.text, ",.;:?!'\"")
			low := strings.ToLower(tok)
			if patternSkips[low] {
				continue
			}
			next := ""
			if k+1 < len(ws) {
				next = strings.ToLower(strings.Trim(ws[k+1].text, ",.;:?!"))
			}
			if looksLikeCode(tok) || (codeWords[next] && isIdent(tok)) {
				return tok, i + len(a) + w.pos
			}
			break
		}
	}
	return "", 0
}

// looksLikeCode reports whether a word is written as a name in code is:
// camelCase, snake_case, ALLCAPS, with a dot, parentheses or "::".
func looksLikeCode(w string) bool {
	if len(w) < 2 {
		return false
	}
	if strings.ContainsAny(w, "_()") || strings.Contains(w, "::") || (strings.Contains(w, ".") && !strings.HasSuffix(w, ".")) {
		return true
	}
	upper, lower := 0, 0
	for i, r := range w {
		switch {
		case unicode.IsUpper(r):
			upper++
			if i > 0 {
				return true // camelCase, PascalCase inside
			}
		case unicode.IsLower(r):
			lower++
		}
	}
	return upper >= 2 && lower == 0 // TODO, FIXME
}

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

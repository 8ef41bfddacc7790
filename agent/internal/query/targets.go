package query

import (
	"path"
	"regexp"
	"strings"
	"unicode"
)

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

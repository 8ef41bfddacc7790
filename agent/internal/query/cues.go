package query

import (
	"regexp"
	"strings"
	"unicode"
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

package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/tools/txtar"
)

// corpusCase is one archive of the corpus.
type corpusCase struct {
	name   string // the archive's base name, without .txtar
	path   string
	source string // the archive's comment: what the case checks and its source
	spec   []byte
	lines  []scriptLine
}

// scriptLine is one instruction of a script.
type scriptLine struct {
	pos  string // "testdata/x.txtar:31", for messages
	verb string // new, restore, send, fire, guard, effect, or "want " and what it checks
	arg  string // the rest of the line, trimmed
}

func (l scriptLine) String() string {
	if strings.HasPrefix(l.verb, "want ") {
		return l.pos + ": " + strings.TrimSpace(l.verb+": "+l.arg)
	}
	return l.pos + ": " + strings.TrimSpace(l.verb+" "+l.arg)
}

// sourceRE is what a case's comment must cite.
var sourceRE = regexp.MustCompile(`SCXML|Boost\.SML|UML 2\.5`)

// loadCase reads an archive: a comment citing the case's source, then the
// files spec.yaml and script.
func loadCase(path string) (*corpusCase, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ar := txtar.Parse(raw)
	c := &corpusCase{name: strings.TrimSuffix(filepath.Base(path), ".txtar"), path: path, source: strings.TrimSpace(string(ar.Comment))}
	if !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(c.name) {
		return nil, fmt.Errorf("%s: name the archive in lower case, letters, digits and underscores: it becomes a directory and a map key", path)
	}
	if !sourceRE.MatchString(c.source) {
		return nil, fmt.Errorf("%s: the comment before the first file must describe the case and cite its source (a W3C SCXML test, a Boost.SML test or a section of UML 2.5)", path)
	}
	var script []byte
	for _, f := range ar.Files {
		switch f.Name {
		case "spec.yaml":
			c.spec = f.Data
		case "script":
			script = f.Data
		default:
			return nil, fmt.Errorf("%s: unexpected file %q: an archive holds spec.yaml and script", path, f.Name)
		}
	}
	if c.spec == nil || script == nil {
		return nil, fmt.Errorf("%s: an archive holds spec.yaml and script", path)
	}
	first := scriptStart(raw)
	for i, text := range strings.Split(string(script), "\n") {
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l, err := parseLine(fmt.Sprintf("%s:%d", path, first+i), text)
		if err != nil {
			return nil, err
		}
		c.lines = append(c.lines, l)
	}
	return c, nil
}

// parseLine splits a script line into its instruction and the rest;
// pos says where it is, for messages.
func parseLine(pos, text string) (scriptLine, error) {
	l := scriptLine{pos: pos}
	if rest, ok := strings.CutPrefix(text, "want "); ok {
		what, arg, found := strings.Cut(rest, ":")
		if !found {
			return l, fmt.Errorf("%s: want needs a colon: want actions: ..., want state: ...", pos)
		}
		l.verb, l.arg = "want "+strings.TrimSpace(what), strings.TrimSpace(arg)
		return l, nil
	}
	verb, arg, _ := strings.Cut(text, " ")
	l.verb, l.arg = verb, strings.TrimSpace(arg)
	return l, nil
}

// scriptStart returns the line number, in the archive, of the script's
// first line.
func scriptStart(raw []byte) int {
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "-- script --" {
			return i + 2
		}
	}
	return 0
}

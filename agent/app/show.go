package app

import (
	"io"
	"os"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/termtext"
)

// The colours of what the display shows, as SGR sequences; they are
// written only when the display has colour (see useColor).
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrRed    = "\x1b[31m"
	sgrGreen  = "\x1b[32m"
	sgrCyan   = "\x1b[36m"
	sgrYellow = "\x1b[33m"
)

// useColor reports whether what is written to f may have colour: f is a
// terminal, NO_COLOR (https://no-color.org) is unset or empty, and TERM
// is not "dumb".
func useColor(f *os.File) bool {
	return isTerminal(f) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// paint returns s in the colour sgr when the display has colour.
func (t *terminal) paint(sgr, s string) string {
	if !t.color || sgr == "" || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

// answer shows the answer of a slash command, whole, on diag.
func (t *terminal) answer(text string) {
	t.endLine()
	text = termtext.Sanitize(text)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, _ = io.WriteString(t.diag, text)
}

// diff shows a unified diff on diag, each line after prefix, coloured
// when the display has colour: added lines green, removed lines red, hunk
// headers cyan, file headers bold.
func (t *terminal) diff(d, prefix string) {
	t.endLine()
	var b strings.Builder
	for line := range strings.Lines(termtext.Sanitize(d)) {
		line = strings.TrimSuffix(line, "\n")
		b.WriteString(prefix)
		b.WriteString(t.paint(diffColor(line), line))
		b.WriteByte('\n')
	}
	_, _ = io.WriteString(t.diag, b.String())
}

// diffColor is the colour of a line of a unified diff.
func diffColor(line string) string {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "diff "):
		return sgrBold
	case strings.HasPrefix(line, "+"):
		return sgrGreen
	case strings.HasPrefix(line, "-"):
		return sgrRed
	case strings.HasPrefix(line, "@@"):
		return sgrCyan
	}
	return ""
}

// Package templates embeds the text templates fsmgen renders its Mermaid
// diagram and Markdown table with. They are logic-free: the emitter hands
// each one a view whose every string is already computed and escaped.
package templates

import (
	"embed"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// Parse returns the named template (e.g. "diagram.mmd.tmpl").
func Parse(name string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").ParseFS(files, name)
}

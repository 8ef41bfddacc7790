package fsm

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

func TestImportName(t *testing.T) {
	tests := []struct {
		alias string
		taken []string
		want  string
	}{
		{"chat", nil, "chat"},
		{"t", nil, "tpkg"},
		{"rules", nil, "rulespkg"},
		{"json", nil, "jsonpkg"},
		{"fsmrt", nil, "pkgfsmrt"},
		{"fsmthing", nil, "pkgfsmthing"},
		{"string", nil, "stringpkg"},
		{"Chat", nil, "Chat"},
		{"State", nil, "Statepkg"},
		{"Chat", []string{"Chat"}, "Chatpkg"},
		{"t", []string{"tpkg"}, "tpkg2"},
		{"t", []string{"tpkg", "tpkg2"}, "tpkg3"},
	}
	for _, tt := range tests {
		taken := map[string]bool{}
		for _, n := range tt.taken {
			taken[n] = true
		}
		assert.Equal(t, tt.want, importName(tt.alias, taken), "%s %v", tt.alias, tt.taken)
	}
}

func TestGoCode(t *testing.T) {
	b := &builder{imports: map[string]*importUse{
		"chat": {Import: spec.Import{Path: spec.String{Value: "example.com/chat"}}},
		"t":    {Import: spec.Import{Path: spec.String{Value: "time"}}},
	}}
	chat := func(name string) GoToken {
		return GoToken{Ident: &GoIdent{GoName: name, GoImportPath: "example.com/chat"}}
	}
	text := func(s string) GoToken { return GoToken{Text: s} }
	tests := []struct {
		src  string
		want GoCode
	}{
		{"int", GoCode{text("int")}},
		{"chat.Message", GoCode{chat("Message")}},
		{"map[string]*chat.Message", GoCode{text("map"), text("["), text("string"), text("]"), text("*"), chat("Message")}},
		{"[3]t.Duration", GoCode{text("["), text("3"), text("]"), {Ident: &GoIdent{GoName: "Duration", GoImportPath: "time"}}}},
		{"chat.New(chat.Config{Retries: 3}).With", GoCode{chat("New"), text("("), chat("Config"), text("{"), text("Retries"), text(":"), text("3"), text("}"), text(")"), text("."), text("With")}},
		{"other.Thing", GoCode{text("other"), text("."), text("Thing")}},
		{`f("a b")`, GoCode{text("f"), text("("), text(`"a b"`), text(")")}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, b.goCode(tt.src), tt.src)
	}
	assert.Equal(t, "string", GoCode{text("string")}.Predeclared())
	assert.Empty(t, GoCode{chat("Message")}.Predeclared())
	assert.Empty(t, GoCode{text("Local")}.Predeclared())
}

package app

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestCallSummaryOfQueries checks how the queries' calls are shown: a
// search by its pattern and directory, a query of facts by its name only.
func TestCallSummaryOfQueries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, args, want string
	}{
		{"search_files", `{"pattern":"greet"}`, `"greet"`},
		{"search_files", `{"pattern":"a \"b\"","path":"src"}`, `"a \"b\"" in src`},
		{"environment", `{}`, ""},
		{"read_file", `{"path":"go.mod"}`, "go.mod"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+tt.args, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, callSummary(chat.ToolCall{Name: tt.name, Arguments: json.RawMessage(tt.args)}))
		})
	}
}

package fakellm_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/fakellm"
)

func TestZZManual(t *testing.T) {
	if os.Getenv("ZZ_MANUAL") == "" {
		t.Skip()
	}
	srv := fakellm.New(t, fakellm.Anthropic)
	srv.Respond(func(r fakellm.Request) fakellm.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.ToolCallID == "" && strings.Contains(last.Text, "mcp") {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__demo__say", Args: `{}`}, {ID: "c2", Name: "read_file", Args: `{"path":"sub/x.go"}`}, {ID: "c3", Name: "mcp__demo__write", Args: `{"path":"mcp.txt","text":"hi\n"}`}}}
		}
		return fakellm.Reply{Text: "Done: " + strings.ReplaceAll(last.Text, "\n", " | ")[:min(len(last.Text), 300)]}
	})
	os.WriteFile("/tmp/mcpdev/url", []byte(srv.BaseURL()), 0o644)
	time.Sleep(150 * time.Second)
}

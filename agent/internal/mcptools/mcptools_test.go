package mcptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/mcptools"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// TestToolName checks the names the model calls MCP tools by: what both
// LLM APIs accept, at most 64 characters.
func TestToolName(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"fs", "read.file", "mcp__fs__read_file"},
		{"fs", "a b/c", "mcp__fs__a_b_c"},
		{"x", "ümlaut-tool", "mcp__x___mlaut-tool"},
		{"s", strings.Repeat("t", 80), "mcp__s__" + strings.Repeat("t", 56)},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got := mcptools.ToolName(tt.server, tt.tool)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, len(got), 64)
			assert.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, got)
		})
	}
}

// secret is the API key of these tests.
const secret = "sk-test-MCP-SECRET-0123456789abcdef"

// TestHTTPServer starts a client of an HTTP MCP server (the SDK's
// streamable handler on httptest) and calls its tools: their specs,
// approval settings, results of every kind of content, errors, the size
// limit and the redaction of the key.
func TestHTTPServer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type none struct{}
	add := func(name string, res *mcp.CallToolResult) {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "The " + name + " tool; key " + secret}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return res, nil, nil
		})
	}
	add("text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b " + secret}}})
	add("image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte("1234")}}})
	add("resource", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.txt", Text: "inside"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte("xyz")}},
		&mcp.ResourceLink{URI: "file:///c.txt", Name: "c"},
	}})
	add("failing", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such issue"}}})
	add("big", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 3000) + strings.Repeat("y", 3000)}}})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)

	ctx := t.Context()
	clients, errs := mcptools.Start(ctx, []mcptools.Server{
		{Name: "web", URL: srv.URL, ReadOnlyTools: []string{"text"}, Approve: map[string]tools.Approval{"failing": tools.ApprovalAlways, "*": tools.ApprovalNever}},
		{Name: "down", URL: "http://127.0.0.1:1/mcp"},
	}, mcptools.Options{Secrets: redact.New(secret), MaxResultBytes: 2048})
	t.Cleanup(func() { assert.NoError(t, clients.Close()) })
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `MCP server "down": connect to http://127.0.0.1:1/mcp: `)
	assert.Equal(t, []string{"web (5 tools)"}, clients.Servers())

	set, err := tools.NewSet(tools.Options{})
	require.NoError(t, err)
	set, err = set.With(clients.Tools()...)
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp__web__big", "mcp__web__failing", "mcp__web__image", "mcp__web__resource", "mcp__web__text"}, set.Names())
	for _, spec := range set.Specs() {
		assert.NotContains(t, spec.Description, secret)
		assert.True(t, json.Valid(spec.InputSchema), "%s", spec.InputSchema)
	}
	assert.Equal(t, tools.ApprovalAlways, set.Approval("mcp__web__failing"))
	assert.Equal(t, tools.ApprovalNever, set.Approval("mcp__web__text"))
	assert.Equal(t, tools.ApprovalPolicy, set.Approval("read_file"), "a tool without a setting of its own")
	readOnly := map[string]bool{}
	for _, tl := range clients.Tools() {
		readOnly[tl.Spec().Name] = tl.(tools.Approvable).ReadOnly()
	}
	assert.Equal(t, map[string]bool{"mcp__web__big": false, "mcp__web__failing": false, "mcp__web__image": false, "mcp__web__resource": false, "mcp__web__text": true}, readOnly)

	tests := []struct {
		tool    string
		want    string
		isError bool
	}{
		{"mcp__web__text", "a\nb [REDACTED]", false},
		{"mcp__web__image", "[an image (image/png, 4 bytes), not shown]", false},
		{"mcp__web__resource", "inside\n[the resource file:///b.bin (application/octet-stream, 3 bytes), not shown]\n[a link to the resource file:///c.txt]", false},
		{"mcp__web__failing", "the tool reported an error: no such issue", true},
		{"mcp__web__big", strings.Repeat("x", 1024) + "\n[... 3952 bytes of the result cut: it was over 2 KiB ...]\n" + strings.Repeat("y", 1024), false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			out := set.Run(ctx, chat.ToolCall{ID: "1", Name: tt.tool, Arguments: json.RawMessage(`{}`)}, nil)
			assert.Equal(t, tt.isError, out.IsError)
			assert.Equal(t, tt.want, out.Content)
		})
	}
}

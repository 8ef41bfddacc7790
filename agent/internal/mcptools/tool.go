package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// unsafeName matches what a tool name may not hold.
var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// maxToolName is the longest tool name both LLM APIs accept.
const maxToolName = 64

// ToolName returns the name the model calls the server's tool by:
// mcp__<server>__<tool>, with every run of characters other than letters,
// digits, _ and - made one _, and cut to 64 characters.
func ToolName(server, name string) string {
	n := "mcp__" + unsafeName.ReplaceAllString(server, "_") + "__" + unsafeName.ReplaceAllString(name, "_")
	if len(n) > maxToolName {
		n = n[:maxToolName]
	}
	return n
}

// tool is one MCP tool as the agent's.
type tool struct {
	conn     *conn
	remote   string
	spec     chat.ToolSpec
	readOnly bool
	approval tools.Approval
	max      int
	secrets  *redact.Redactor
}

var _ tools.Approvable = (*tool)(nil)

// Spec implements tools.Tool.
func (t *tool) Spec() chat.ToolSpec { return t.spec }

// Approval implements tools.Approvable.
func (t *tool) Approval() tools.Approval { return t.approval }

// ReadOnly implements tools.Approvable.
func (t *tool) ReadOnly() bool { return t.readOnly }

// Mutating implements tools.Mutator: an MCP tool may change anything
// unless its server's entry lists it as read-only.
func (t *tool) Mutating() bool { return !t.readOnly }

// Run implements tools.Tool: it calls the tool on its server.
func (t *tool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args map[string]any
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("invalid arguments: %v; give a JSON object as the tool's input schema describes", err)
		}
	}
	res, err := t.conn.session.CallTool(ctx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if why := t.conn.exited(); why != "" {
			return "", fmt.Errorf("MCP server %s %s; it is not restarted in this session: do without its tools", t.conn.server.Name, why)
		}
		return "", fmt.Errorf("MCP server %s: %s", t.conn.server.Name, t.secrets.String(err.Error()))
	}
	out := t.secrets.String(cut(render(res), t.max))
	if res.IsError {
		return "", errors.New("the tool reported an error: " + out)
	}
	return out, nil
}

// render returns the result's content as text: text as it is, other kinds
// described; the structured content when there is nothing else.
func render(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image (%s, %d bytes), not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio (%s, %d bytes), not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[a link to the resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				parts = append(parts, r.Text)
			} else if r != nil {
				parts = append(parts, fmt.Sprintf("[the resource %s (%s, %d bytes), not shown]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			parts = append(parts, fmt.Sprintf("[content of type %T, not shown]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		return "(no output)"
	}
	return strings.Join(parts, "\n")
}

// cut cuts s to max bytes, keeping its beginning and end, with a note.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	half := max / 2
	return strings.ToValidUTF8(s[:half], "") + fmt.Sprintf("\n[... %d bytes of the result cut: it was over %d KiB ...]\n", len(s)-2*half, max>>10) +
		strings.ToValidUTF8(s[len(s)-half:], "")
}

// Command mcpserver is an MCP server for the agent's tests, on the
// official Go SDK: over stdio by default, or streamable HTTP with -http.
//
//	mcpserver [-say TEXT] [-crash] [-http ADDR] [-marker TEXT]
//
// Its tools: say (returns -say's text), echo (returns its text argument),
// write (writes a file in its working directory), slow (waits until it is
// cancelled), picture (returns an image), die (exits at once). -crash writes to standard error
// and exits 3 at once.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text"`
}

type writeArgs struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	say := flag.String("say", "hello from mcp", "what the say tool returns")
	sayROT13 := flag.String("say-rot13", "", "what the say tool returns, in ROT13: a test hands it a secret the agent would refuse in the entry")
	crash := flag.Bool("crash", false, "exit at once with an error")
	addr := flag.String("http", "", "serve streamable HTTP on this address")
	_ = flag.String("marker", "", "ignored: lets a test find the process")
	flag.Parse()
	if *sayROT13 != "" {
		*say = strings.Map(rot13, *sayROT13)
	}
	if *crash {
		fmt.Fprintln(os.Stderr, "mcpserver: boom, cannot start")
		os.Exit(3)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "say", Description: "Say the configured text."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return text(*say), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(ctx context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return text("echo: " + a.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Write a file."}, func(ctx context.Context, _ *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
		if err := os.WriteFile(a.Path, []byte(a.Text), 0o644); err != nil {
			return nil, nil, err
		}
		return text("wrote " + a.Path), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Wait until cancelled."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(s, &mcp.Tool{Name: "picture", Description: "Return an image."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG....")}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Exit at once."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "mcpserver: dying")
		os.Exit(1)
		return nil, nil, nil
	})
	if *addr != "" {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		log.Fatal(http.ListenAndServe(*addr, h))
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// rot13 turns a letter 13 places in the alphabet, as ROT13 does.
func rot13(r rune) rune {
	switch {
	case 'a' <= r && r <= 'z':
		return 'a' + (r-'a'+13)%26
	case 'A' <= r && r <= 'Z':
		return 'A' + (r-'A'+13)%26
	}
	return r
}

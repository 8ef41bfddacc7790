package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/fsm"
)

func TestNames(t *testing.T) {
	tests := []struct {
		in, goName, lower, snake string
	}{
		{"CallingLlm", "CallingLLM", "callingLLM", "calling_llm"},
		{"WaitingForUserInput", "WaitingForUserInput", "waitingForUserInput", "waiting_for_user_input"},
		{"call_id", "CallID", "callID", "call_id"},
		{"LLMError", "LLMError", "llmError", "llm_error"},
		{"HTTPServer", "HTTPServer", "httpServer", "http_server"},
		{"toolsPending", "ToolsPending", "toolsPending", "tools_pending"},
		{"tcp_syn_sent", "TCPSynSent", "tcpSynSent", "tcp_syn_sent"},
		{"Error", "Error", "error", "error"},
		{"type", "Type", "type_", "type"},
		{"v2Ready", "V2Ready", "v2Ready", "v2_ready"},
		{"url", "URL", "url", "url"},
		{"A", "A", "a", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.goName, fsm.GoName(tt.in))
			assert.Equal(t, tt.lower, fsm.LowerName(tt.in))
			assert.Equal(t, tt.snake, fsm.SnakeName(tt.in))
		})
	}
}

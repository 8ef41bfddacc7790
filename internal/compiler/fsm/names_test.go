package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

func TestNames(t *testing.T) {
	tests := []struct {
		in, goName, lower, snake string
	}{
		// In a name with lower case letters, a word written in capitals
		// stays in capitals; unexported, a first word is all lower case,
		// as Go writes tcpConn.
		{"CreateTCB", "CreateTCB", "createTCB", "create_tcb"},
		{"TCBState", "TCBState", "tcbState", "tcb_state"},
		{"twoMSL", "TwoMSL", "twoMSL", "two_msl"},
		{"SendRST", "SendRST", "sendRST", "send_rst"},
		{"UTF8Text", "UTF8Text", "utf8Text", "utf8_text"},
		{"EnterSS1_2", "EnterSS12", "enterSS12", "enter_ss1_2"},
		{"new_TCB_id", "NewTCBID", "newTCBID", "new_tcb_id"},
		// A word not written in capitals keeps Go's capitalisation:
		// known initialisms in capitals, others capitalised.
		{"CreateTcb", "CreateTcb", "createTcb", "create_tcb"},
		{"Tl", "Tl", "tl", "tl"},
		{"userId", "UserID", "userID", "user_id"},
		{"Http_server", "HTTPServer", "httpServer", "http_server"},
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
		// The words of a name all in capitals (UPPER_SNAKE, as RFCs
		// write states) are words; Go's initialisms stay in capitals.
		{"SYN_SENT", "SynSent", "synSent", "syn_sent"},
		{"RCV_SYN_ACK", "RcvSynAck", "rcvSynAck", "rcv_syn_ack"},
		{"FIN_WAIT_1", "FinWait1", "finWait1", "fin_wait_1"},
		{"TIME_WAIT", "TimeWait", "timeWait", "time_wait"},
		{"CLOSED", "Closed", "closed", "closed"},
		{"TCB", "Tcb", "tcb", "tcb"},
		{"TL", "Tl", "tl", "tl"},
		{"TCP_OPEN", "TCPOpen", "tcpOpen", "tcp_open"},
		{"CALL_ID", "CallID", "callID", "call_id"},
		{"UTF8_TEXT", "UTF8Text", "utf8Text", "utf8_text"},
		{"HTTP_2", "HTTP2", "http2", "http_2"},
		{"TYPE", "Type", "type_", "type"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.goName, fsm.GoName(tt.in))
			assert.Equal(t, tt.lower, fsm.LowerName(tt.in))
			assert.Equal(t, tt.snake, fsm.SnakeName(tt.in))
		})
	}
}

// TestNamer checks a spec's own initialisms: put in capitals however a
// name writes them, beside Go's; other words as GoName spells them.
func TestNamer(t *testing.T) {
	n := fsm.NewNamer("SYN", "ACK", "TCB", "RFC793")
	tests := []struct {
		in, goName, lower string
	}{
		{"SYN_SENT", "SYNSent", "synSent"},
		{"RCV_SYN_ACK", "RcvSYNACK", "rcvSYNACK"},
		{"DELETE_TCB", "DeleteTCB", "deleteTCB"},
		{"delete_tcb", "DeleteTCB", "deleteTCB"},
		{"DeleteTcb", "DeleteTCB", "deleteTCB"},
		{"DeleteTCB", "DeleteTCB", "deleteTCB"},
		{"SynSent", "SYNSent", "synSent"},
		{"TCB", "TCB", "tcb"},
		{"tcb_id", "TCBID", "tcbID"},
		{"TCP_OPEN", "TCPOpen", "tcpOpen"},
		{"rfc793_state", "RFC793State", "rfc793State"},
		// Not an initialism of the spec's, nor Go's.
		{"FIN_WAIT_2", "FinWait2", "finWait2"},
		{"Synced", "Synced", "synced"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.goName, n.GoName(tt.in))
			assert.Equal(t, tt.lower, n.LowerName(tt.in))
		})
	}
}

func TestParamName(t *testing.T) {
	imports := []fsm.Import{{Alias: "chat"}}
	tests := []struct{ in, want string }{
		{"call_id", "callID"},
		{"TCB", "tcb"},
		{"CreateTCB", "createTCB"},
		{"LLMError", "llmError"},
		{"peer_URL", "peerURL"},
		{"error", "err"},
		{"len", "len_"},
		{"type", "type_"},
		{"chat", "chat_"},
		{"m", "m_"},
		{"fsmState", "fsmState_"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, fsm.ParamName(tt.in, imports))
		})
	}
}

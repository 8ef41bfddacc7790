package apitest_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/api"
)

// sendWhole sends a request with a body of size bytes as a simple client
// does (curl, many libraries): the whole body first, then it reads the
// answer. It returns the answer's status and error code.
func sendWhole(t *testing.T, url, method, path string, header map[string]string, size int) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n", method, path, size)
	for k, v := range header {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	_, err = io.WriteString(conn, head.String())
	require.NoError(t, err)
	chunk := []byte(strings.Repeat("x", 64<<10))
	for sent := 0; sent < size; sent += len(chunk) {
		_, err := conn.Write(chunk[:min(len(chunk), size-sent)])
		require.NoError(t, err, "the server stopped reading the body after %d bytes", sent)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the answer")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	code := ""
	if i := strings.Index(string(body), `"code":"`); i >= 0 {
		code = strings.SplitN(string(body)[i+8:], `"`, 2)[0]
	}
	return resp.StatusCode, code
}

// A body too large (or sent with a request refused for another reason) is
// answered, not cut off: the server reads what is left of it (up to a
// bound) before it answers, so a client that sends it whole gets the 413.
func TestLargeBodyAnswered(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{MaxThreadBytes: 1 << 20})
	job := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	auth := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
	const size = 24 << 20
	tests := []struct {
		name, method, path string
		header             map[string]string
		status             int
		code               string
	}{
		{"a monitor", "POST", "/api/crons/monitors", auth, 413, "body_too_large"},
		{"a ping", "POST", "/ping/" + job.PingKey, nil, 413, "body_too_large"},
		{"a thread", "PUT", "/api/threads/t1", auth, 413, "thread_too_large"},
		{"a wrong token", "PUT", "/api/threads/t1", map[string]string{"Authorization": "Bearer fsm_wrong"}, 401, "invalid_token"},
		{"an unknown parameter", "POST", "/ping/" + job.PingKey + "?exitcode=1", nil, 400, "unknown_parameter"},
	}
	for _, tt := range tests {
		status, code := sendWhole(t, s.url, tt.method, tt.path, tt.header, size)
		assert.Equal(t, tt.status, status, tt.name)
		assert.Equal(t, tt.code, code, tt.name)
	}
}

// The page and the health check take any query (a browser's, a load
// balancer's additions).
func TestAnyQueryOnThePageAndHealth(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	a := s.do(req{method: "GET", path: "/health?probe=lb&_=1", header: map[string]string{"Authorization": ""}})
	assert.Equal(t, http.StatusOK, a.status, "%s", a.body)
}

package llm

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name, mediaType, body, want string
	}{
		{"page: the body's text, not the head's", "text/html",
			"<!DOCTYPE html><html><head><title>Error response</title><style>p{color:red}</style></head>" +
				"<body><h1>Error response</h1><p>Error code: 501</p><p>Message: Unsupported method (&#x27;POST&#x27;).</p></body></html>",
			"Error response Error code: 501 Message: Unsupported method ('POST')."},
		{"page with a title only", "text/html", "<html><head><title>Not &amp; Found</title></head><body></body></html>", "Not & Found"},
		{"page's script and comments dropped", "text/html", "<body><!-- secret --><script>alert('x<y')</script>Hello</body>", "Hello"},
		{"page of unnamed type", "", "  <html><body><b>Bad</b> Gateway</body></html>", "Bad Gateway"},
		{"long text cut", "text/plain", long, strings.Repeat("word ", 24) + "…"},
		{"control characters dropped", "text/plain", "a\x00b\x1b[2Jc\r\nd\u2066e\u2069", "ab[2Jc de"},
		{"empty", "text/plain", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, excerpt(tt.mediaType, []byte(tt.body)))
		})
	}
}

func TestAPIShaped(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{`{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, true},
		{`{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`, true},
		{`{"error":"model not found"}`, true},
		{`{"object":"error","message":"m","type":"NotFoundError","code":404}`, true},
		{`{"message":"m","type":"invalid_request_error"}`, true},
		{`{"detail":"Not Found"}`, false},
		{`{"error":null}`, false},
		{`404 page not found`, false},
		{`<html></html>`, false},
		{``, false},
		{`[1,2]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			assert.Equal(t, tt.want, apiShaped([]byte(tt.body)))
		})
	}
}

func TestSniffSuccess(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		// foreign says the body is not the API's.
		foreign bool
	}{
		{"event stream", "text/event-stream", "anything", false},
		{"JSON", "application/json; charset=utf-8", "{}", false},
		{"events as plain text", "text/plain", "event: message_start\ndata: {}\n\n", false},
		{"data first", "text/plain; charset=utf-8", "\n\ndata: {}\n\n", false},
		{"a comment first", "", ": keep-alive\n\ndata: {}\n\n", false},
		{"plain text", "text/plain", "Hello, world!\n", true},
		{"page", "text/html", "data: <b>not</b>", true},
		{"octet stream", "application/octet-stream", "\x00\x01\x02", true},
		{"empty plain text", "text/plain", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, f := sniffSuccess(200, tt.contentType, io.NopCloser(strings.NewReader(tt.body)))
			if tt.foreign {
				require.NotNil(t, f)
				assert.Equal(t, 200, f.status)
				return
			}
			require.Nil(t, f)
			got, err := io.ReadAll(body)
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(got), "the body is passed on whole")
		})
	}
}

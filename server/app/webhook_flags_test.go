package app

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -alert-webhook at an internal address is refused at start unless
// -webhook-allow lists it; a bad list names its item.
func TestWebhookFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		err  []string // what the error says; none when accepted
	}{
		{[]string{"-alert-webhook", "https://hooks.example.com/x"}, nil},
		{[]string{"-alert-webhook", "http://169.254.169.254/latest/meta-data/"}, []string{"-alert-webhook", "cloud metadata", "-webhook-allow"}},
		{[]string{"-alert-webhook", "http://127.0.0.1:9000/hook"}, []string{"-alert-webhook", "127.0.0.1 is a loopback address"}},
		{[]string{"-alert-webhook", "http://localhost:9000/hook"}, []string{"localhost is a loopback address"}},
		{[]string{"-alert-webhook", "http://127.0.0.1:9000/hook", "-webhook-allow", "127.0.0.1:9000"}, nil},
		{[]string{"-alert-webhook", "http://127.0.0.1:9000/hook", "-webhook-allow", "127.0.0.1:9001"}, []string{"loopback"}},
		{[]string{"-alert-webhook", "http://10.1.2.3/hook", "-webhook-allow", "192.168.0.0/16, 10.1.2.0/24"}, nil},
		{[]string{"-webhook-allow", "10.0.0.0/33"}, []string{"-webhook-allow", `"10.0.0.0/33"`, "10.1.2.0/24"}},
		{[]string{"-alert-webhook", "ftp://example.com/"}, []string{"-alert-webhook", "http or https"}},
	}
	for _, tt := range tests {
		o, err := parse(tt.args, io.Discard)
		if tt.err == nil {
			require.NoError(t, err, "%q", tt.args)
			assert.NotNil(t, o.allow)
			continue
		}
		if assert.Error(t, err, "%q", tt.args) {
			for _, want := range tt.err {
				assert.Contains(t, err.Error(), want, "%q", tt.args)
			}
		}
	}
}

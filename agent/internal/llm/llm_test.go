package llm

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		cfg     Config
		wantErr error
		want    string
	}{
		{name: "anthropic from env", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: NameAnthropic},
		{name: "name is case-insensitive", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: NameAnthropic},
		{name: "anthropic without key", wantErr: ErrNoAPIKey, want: NameAnthropic},
		{name: "anthropic with bad base URL", cfg: Config{APIKey: "k", BaseURL: "localhost:8080"}, wantErr: ErrBadBaseURL, want: NameAnthropic},
		{name: "openai from env", env: map[string]string{"OPENAI_API_KEY": "k"}, want: NameOpenAI},
		{name: "openai local server without key", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:8080/v1"}, want: NameOpenAI},
		{name: "openai without key or base URL", wantErr: ErrNoAPIKey, want: NameOpenAI},
		{name: "openai with bad base URL", cfg: Config{BaseURL: "ftp://x"}, wantErr: ErrBadBaseURL, want: NameOpenAI},
		{name: "unknown provider", wantErr: ErrUnknownProvider, want: "gemini"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
				t.Setenv(k, tt.env[k])
			}
			name := tt.want
			if tt.name == "name is case-insensitive" {
				name = " Anthropic "
			}
			p, err := New(name, tt.cfg)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, p)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Name())
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_BASE_URL", "http://env")
	t.Setenv("OPENAI_API_KEY", "oai-env-key")
	t.Setenv("OPENAI_BASE_URL", "")

	assert.Equal(t, Config{APIKey: "env-key", BaseURL: "http://env"}, FromEnv("anthropic", Config{}))
	assert.Equal(t, Config{APIKey: "mine", BaseURL: "http://env"}, FromEnv("anthropic", Config{APIKey: "mine"}), "set fields are kept")
	assert.Equal(t, Config{APIKey: "oai-env-key"}, FromEnv("openai", Config{}))
	assert.Equal(t, Config{}, FromEnv("other", Config{}))
}

func TestConstructorErrorsSayWhatToDo(t *testing.T) {
	_, err := NewAnthropic(Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ANTHROPIC_API_KEY")
	_, err = NewOpenAI(Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OPENAI_BASE_URL")
	_, err = New("nope", Config{})
	assert.Contains(t, err.Error(), `"anthropic"`)
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "30"}, 30 * time.Second},
		{"fractional seconds", map[string]string{"retry-after": "1.5"}, 1500 * time.Millisecond},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"HTTP date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds win", map[string]string{"retry-after-ms": "250", "retry-after": "9"}, 250 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"retry-after-ms": "soon", "retry-after": "2"}, 2 * time.Second},
		{"negative", map[string]string{"retry-after": "-5"}, 0},
		{"garbage", map[string]string{"retry-after": "tomorrow"}, 0},
		{"huge is capped", map[string]string{"retry-after": "1e300"}, maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			assert.Equal(t, tt.want, retryAfter(h, now))
		})
	}
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want errorInfo
	}{
		{"anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			errorInfo{typ: "overloaded_error", message: "Overloaded"}},
		{"openai", `{"error":{"message":"m","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			errorInfo{typ: "invalid_request_error", message: "m", code: "invalid_api_key"}},
		{"llama.cpp numeric code", `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`,
			errorInfo{typ: "unavailable_error", message: "Loading model", code: "503"}},
		{"vLLM top level", `{"object":"error","message":"m","type":"BadRequestError","param":null,"code":400}`,
			errorInfo{typ: "BadRequestError", message: "m", code: "400"}},
		{"error as text", `{"error":"model not found"}`, errorInfo{message: "model not found"}},
		{"not JSON", "Bad Gateway\n", errorInfo{message: "Bad Gateway"}},
		{"empty", "", errorInfo{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseErrorBody([]byte(tt.body)))
		})
	}
}

func TestKindForStatus(t *testing.T) {
	tests := map[int]chat.ErrorKind{
		400: chat.ErrInvalidRequest, 401: chat.ErrAuth, 402: chat.ErrOther, 403: chat.ErrAuth,
		404: chat.ErrInvalidRequest, 408: chat.ErrTimeout, 409: chat.ErrOther, 413: chat.ErrInvalidRequest,
		422: chat.ErrInvalidRequest, 429: chat.ErrRateLimited, 500: chat.ErrServer, 502: chat.ErrServer,
		503: chat.ErrServer, 504: chat.ErrServer, 529: chat.ErrOverloaded,
	}
	for status, want := range tests {
		assert.Equal(t, want, kindForStatus(status), "HTTP %d", status)
	}
}

func TestClassifyAPIOverloadedTypeWins(t *testing.T) {
	body := []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	e := classifyAPI(NameAnthropic, apiFailure{status: 500, body: body}, time.Now())
	assert.Equal(t, chat.ErrOverloaded, e.Kind)
	assert.Equal(t, 500, e.StatusCode)
}

func TestClassifyTransport(t *testing.T) {
	assert.Equal(t, chat.ErrNetwork, classifyTransport("p", errors.New("connection reset by peer"), true, false).Kind)
	assert.Equal(t, chat.ErrOther, classifyTransport("p", errors.New("bad option"), false, false).Kind)
	assert.Equal(t, chat.ErrTimeout, classifyTransport("p", errors.Join(errors.New("x"), errTimeout{}), true, false).Kind)
}

// errTimeout is a net.Error that timed out.
type errTimeout struct{}

func (errTimeout) Error() string   { return "i/o timeout" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }

func TestScrubber(t *testing.T) {
	assert.Equal(t, "key [REDACTED] and [REDACTED]", scrubber{secret: "abc123"}.scrub("key abc123 and abc123"))
	assert.Equal(t, "nothing to hide", scrubber{}.scrub("nothing to hide"))
	f := scrubber{secret: "abc123"}.fail(chat.LLMError{Kind: chat.ErrAuth, Message: "bad key abc123"})
	assert.Equal(t, "bad key [REDACTED]", f.Err.Message)
}

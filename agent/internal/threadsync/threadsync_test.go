package threadsync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/internal/proctest"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

const secret = "sk-ant-SYNC-SECRET-0123456789abcdef"

// serverBin is cmd/server, built once for the package's tests.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "threadsync-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	if out, err := exec.Command("go", "build", "-o", serverBin, "../../../cmd/server").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// server is the real server (cmd/server on a SQLite file) behind a front
// on an address the tests stop and start again (a server that goes down
// and comes back, as the pusher sees it); fault, when set, answers a
// request instead of the server (nil: the server answers).
type server struct {
	t       *testing.T
	addr    string
	token   string // the server's admin key
	handler http.Handler
	mu      sync.Mutex
	srv     *http.Server
	puts    atomic.Int64
	fault   atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
}

// newServer starts the server with args added to its flags.
func newServer(t *testing.T, args ...string) *server {
	t.Helper()
	backend, token := startServer(t, args...)
	s := &server{t: t, token: token, handler: httputil.NewSingleHostReverseProxy(backend)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.stop)
	return s
}

// startServer runs cmd/server on a fresh SQLite file, with args added to
// its flags, and returns its base URL and admin token, once it serves; it
// is killed when t ends.
func startServer(t *testing.T, args ...string) (*url.URL, string) {
	t.Helper()
	addr := proctest.FreeAddr(t)
	cmd := exec.Command(serverBin, append([]string{"-addr", addr, "-db", filepath.Join(t.TempDir(), "server.db")}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr proctest.Buffer
	cmd.Stderr = &stderr
	line := proctest.Start(t, cmd) // the server prints its token first
	token, ok := strings.CutPrefix(strings.TrimSpace(line), "token: ")
	require.True(t, ok, "the server's first line: %q", line)
	base := &url.URL{Scheme: "http", Host: addr}
	require.Eventually(t, func() bool {
		resp, err := http.Get(base.String() + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "the server serves: %s", &stderr)
	return base, token
}

func (s *server) url() string { return "http://" + s.addr }

func (s *server) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			s.puts.Add(1)
		}
		if f := s.fault.Load(); f != nil && (*f)(w, r) {
			return
		}
		s.handler.ServeHTTP(w, r)
	})}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go srv.Serve(ln)
}

// stop stops the server: its address refuses connections.
func (s *server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
}

// start starts the server again on its address.
func (s *server) start() {
	ln, err := net.Listen("tcp", s.addr)
	require.NoError(s.t, err)
	s.serve(ln)
}

func (s *server) setFault(f func(w http.ResponseWriter, r *http.Request) bool) { s.fault.Store(&f) }

// threadView is what GET /api/threads/{id} answers (docs/server.md),
// that the tests read.
type threadView struct {
	ID       string          `json:"id"`
	Revision int64           `json:"revision"`
	Thread   json.RawMessage `json:"thread"`
}

// get returns the server's view of thread id (its thread decoded), and
// whether it has one.
func (s *server) get(id string) (threadView, *threadwire.Thread, bool) {
	req, err := http.NewRequest("GET", s.url()+"/api/threads/"+id, nil)
	require.NoError(s.t, err)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	if resp.StatusCode == http.StatusNotFound {
		return threadView{}, nil, false
	}
	require.Equal(s.t, http.StatusOK, resp.StatusCode, "%s", data)
	var v threadView
	require.NoError(s.t, json.Unmarshal(data, &v))
	var th threadwire.Thread
	require.NoError(s.t, json.Unmarshal(v.Thread, &th))
	return v, &th, true
}

// version is thread id at its nth save: n user messages, updated n
// seconds after t0.
func version(t *testing.T, id string, n int) *threadwire.Thread {
	t.Helper()
	t0 := time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
	th := &threadwire.Thread{Version: threadwire.Version, ID: id, Created: t0, Updated: t0.Add(time.Duration(n) * time.Second),
		Provider: "anthropic", Model: "fake-model", Workspace: "/src"}
	for i := range n {
		b, err := json.Marshal(chat.Message{Role: chat.RoleUser, Content: "message " + string(rune('a'+i%26))})
		require.NoError(t, err)
		th.Messages = append(th.Messages, b)
	}
	return th
}

// notes collects what the pusher tells the user.
type notes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notes) add(m string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, m)
}

func (n *notes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.msgs...)
}

func newPusher(t *testing.T, url, tok string, n *notes) *threadsync.Pusher {
	t.Helper()
	p, err := threadsync.New(threadsync.Config{URL: url, Token: tok, Secrets: []string{secret}, Notify: n.add,
		MinDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond})
	require.NoError(t, err)
	p.Start(context.Background())
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}

// stopWithin stops the pusher, giving it d to push what is left.
func stopWithin(p *threadsync.Pusher, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return p.Stop(ctx)
}

// TestPushes covers the pusher's ways with the server: each case feeds
// versions of a thread, the server failing as the case says, and checks
// what the server holds after Stop, how many PUTs it got and what the
// user was told.
func TestPushes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		token string
		// fault answers the nth PUT (from 1) instead of the server when
		// it returns true.
		fault    func(n int64, w http.ResponseWriter, r *http.Request) bool
		versions []int // the saves, in order
		// before stores this version at the server first.
		before  int
		want    int // the version the server holds at the end; 0: none
		puts    int64
		stopErr string
		notes   []string // each a part of one note, in order
	}{
		{name: "one version", versions: []int{1}, want: 1, puts: 1},
		{name: "5xx retried, Retry-After honoured", versions: []int{2},
			fault: func(n int64, w http.ResponseWriter, r *http.Request) bool {
				if n <= 2 {
					w.Header().Set("Retry-After", "0")
					http.Error(w, `{"error":{"code":"store_unavailable","message":"down"}}`, http.StatusServiceUnavailable)
					return true
				}
				return false
			}, want: 2, puts: 3, notes: []string{"503 Service Unavailable (store_unavailable: down); retrying in the background", "answers again"}},
		{name: "429 and 408 retried", versions: []int{3},
			fault: func(n int64, w http.ResponseWriter, r *http.Request) bool {
				switch n {
				case 1:
					w.WriteHeader(http.StatusTooManyRequests)
					return true
				case 2:
					w.WriteHeader(http.StatusRequestTimeout)
					return true
				}
				return false
			}, want: 3, puts: 3, notes: []string{"429", "answers again"}},
		{name: "answer lost after the store: the same revision again is a no-op", versions: []int{4},
			fault: func(n int64, w http.ResponseWriter, r *http.Request) bool {
				if n == 1 {
					rec := &discard{header: http.Header{}}
					r.Body = io.NopCloser(r.Body)
					// The server stores it; its answer is lost.
					(*serverOf(r)).ServeHTTP(rec, r)
					w.WriteHeader(http.StatusBadGateway)
					return true
				}
				return false
			}, want: 4, puts: 2, notes: []string{"502", "answers again"}},
		{name: "wrong token: said once, no retry, sync off", token: "fsm_wrong", versions: []int{1, 2, 3},
			want: 0, puts: 1, stopErr: "was not synced", notes: []string{"refuses thread t-1: 401 Unauthorized (invalid_token"}},
		{name: "older than the server's: dropped", versions: []int{2}, before: 5,
			want: 5, puts: 2, notes: []string{"was not pushed: 409 Conflict (stale_revision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			if tt.before > 0 {
				var n notes
				p := newPusher(t, s.url(), s.token, &n)
				p.Saved(version(t, "t-1", tt.before))
				require.NoError(t, stopWithin(p, 5*time.Second))
			}
			if tt.fault != nil {
				base := s.puts.Load()
				s.setFault(func(w http.ResponseWriter, r *http.Request) bool {
					return tt.fault(s.puts.Load()-base, w, withServer(r, s.handler))
				})
			}
			tok := s.token
			if tt.token != "" {
				tok = tt.token
			}
			var n notes
			p := newPusher(t, s.url(), tok, &n)
			for _, v := range tt.versions {
				p.Saved(version(t, "t-1", v))
			}
			err := stopWithin(p, 5*time.Second)
			if tt.stopErr != "" {
				require.ErrorContains(t, err, tt.stopErr)
				assert.ErrorContains(t, err, "agent -resume t-1 -sync "+s.url())
			} else {
				require.NoError(t, err)
			}
			_, th, ok := s.get("t-1")
			if tt.want == 0 {
				assert.False(t, ok, "the server holds the thread")
			} else {
				require.True(t, ok)
				assert.Len(t, th.Messages, tt.want, "the server holds version %d", tt.want)
			}
			assert.Equal(t, tt.puts, s.puts.Load(), "PUTs")
			got := n.all()
			require.Len(t, got, len(tt.notes), "notes: %q", got)
			for i, want := range tt.notes {
				assert.Contains(t, got[i], want)
			}
		})
	}
}

// discard is a ResponseWriter that drops what is written.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

type handlerKey struct{}

func withServer(r *http.Request, h http.Handler) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), handlerKey{}, &h))
}

func serverOf(r *http.Request) *http.Handler { return r.Context().Value(handlerKey{}).(*http.Handler) }

// TestCoalesce feeds 200 versions while the server holds the first push:
// only the newest is pushed after it, and the server ends with it.
func TestCoalesce(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	release := make(chan struct{})
	held := make(chan struct{})
	var once sync.Once
	s.setFault(func(w http.ResponseWriter, r *http.Request) bool {
		once.Do(func() {
			close(held)
			<-release
		})
		return false
	})
	var n notes
	p := newPusher(t, s.url(), s.token, &n)
	p.Saved(version(t, "t-1", 1))
	<-held
	for v := 2; v <= 200; v++ {
		p.Saved(version(t, "t-1", v))
	}
	close(release)
	require.NoError(t, stopWithin(p, 5*time.Second))
	_, th, ok := s.get("t-1")
	require.True(t, ok)
	assert.Len(t, th.Messages, 200)
	assert.Equal(t, int64(2), s.puts.Load(), "the first push, then the newest version only")
	assert.Equal(t, 2, p.Pushed())
	assert.Empty(t, n.all())
}

// TestServerRestarts stops the server while versions are saved and
// starts it again: the newest version reaches it, and the user is told
// once that it was down and once that it is back.
func TestServerRestarts(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	var n notes
	p := newPusher(t, s.url(), s.token, &n)
	p.Saved(version(t, "t-1", 1))
	require.Eventually(t, func() bool { return p.Pushed() == 1 }, 5*time.Second, time.Millisecond)
	s.stop()
	for v := 2; v <= 5; v++ {
		p.Saved(version(t, "t-1", v))
	}
	require.Eventually(t, func() bool { return len(n.all()) == 1 }, 5*time.Second, time.Millisecond)
	assert.Contains(t, n.all()[0], "does not answer")
	s.start()
	require.NoError(t, stopWithin(p, 5*time.Second))
	_, th, ok := s.get("t-1")
	require.True(t, ok)
	assert.Len(t, th.Messages, 5)
	require.Len(t, n.all(), 2, "%q", n.all())
	assert.Contains(t, n.all()[1], "answers again")
}

// TestStopWhileDown gives Stop a bounded time with the server down: it
// returns, naming the thread, and the next pusher (the agent run again
// with -sync) pushes it.
func TestStopWhileDown(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.stop()
	var n notes
	p := newPusher(t, s.url(), s.token, &n)
	p.Saved(version(t, "t-1", 3))
	err := stopWithin(p, 200*time.Millisecond)
	require.ErrorContains(t, err, "thread t-1 was not synced to "+s.url())
	s.start()
	p2 := newPusher(t, s.url(), s.token, &n)
	p2.Saved(version(t, "t-1", 3))
	require.NoError(t, stopWithin(p2, 5*time.Second))
	_, th, ok := s.get("t-1")
	require.True(t, ok)
	assert.Len(t, th.Messages, 3)
}

// TestRedacted pushes a thread that holds the secret, raw and in JSON's
// escapes: the server never gets it.
func TestRedacted(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	var n notes
	p := newPusher(t, s.url(), s.token, &n)
	th := version(t, "t-1", 1)
	b, err := json.Marshal(chat.Message{Role: chat.RoleTool, Content: "env: KEY=" + secret})
	require.NoError(t, err)
	th.Messages = append(th.Messages, b)
	th.QueuedInput = []string{"the key is " + secret}
	p.Saved(th)
	require.NoError(t, stopWithin(p, 5*time.Second))
	v, got, ok := s.get("t-1")
	require.True(t, ok)
	assert.NotContains(t, string(v.Thread), secret)
	assert.NotContains(t, string(v.Thread), secret[len(secret)-24:])
	assert.Contains(t, got.QueuedInput[0], "[REDACTED]")
}

// TestNew refuses what is not a server's base URL.
func TestNew(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://host", "http://", "http://host/?x=1", "://bad"} {
		_, err := threadsync.New(threadsync.Config{URL: u})
		require.ErrorContains(t, err, "give the server's base URL", u)
	}
	p, err := threadsync.New(threadsync.Config{URL: "https://host:8080/base/"})
	require.NoError(t, err)
	assert.Equal(t, "https://host:8080/base", p.URL())
}

// TestNewRefusesPlainHTTP (issue 29 item 4): plain http:// is refused
// for a host other than loopback, where the token would cross the
// network in clear, unless AllowHTTP says so; the refusal comes before
// any dial (a dialer that records its addresses and reaches nothing
// proves it: with AllowHTTP the push does dial).
func TestNewRefusesPlainHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url   string
		allow bool
		ok    bool
	}{
		{url: "http://192.0.2.1:8080"},
		{url: "http://sync.example.com"},
		{url: "http://localhost.example.com:8080"},
		{url: "http://10.0.0.1:8080/base"},
		{url: "http://[2001:db8::1]:8080"},
		{url: "http://127.0.0.1:8080", ok: true},
		{url: "http://127.8.9.10:8080", ok: true},
		{url: "http://[::1]:8080", ok: true},
		{url: "http://[::ffff:127.0.0.1]:8080", ok: true},
		{url: "http://localhost:8080", ok: true},
		{url: "http://LocalHost.:8080", ok: true},
		{url: "https://192.0.2.1:8443", ok: true},
		{url: "http://192.0.2.1:8080", allow: true, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			// In a bubble: the push that AllowHTTP lets through is dialled
			// before Stop's 100 ms pass on the bubble's clock, however busy
			// the machine.
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var dialed []string
				client := &http.Client{Transport: &http.Transport{
					Proxy: nil,
					DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
						mu.Lock()
						defer mu.Unlock()
						dialed = append(dialed, addr)
						return nil, errors.New("the test's dialer reaches nothing")
					},
				}}
				p, err := threadsync.New(threadsync.Config{URL: tt.url, AllowHTTP: tt.allow, Token: "fsm_any-token", Client: client,
					MinDelay: time.Millisecond, MaxDelay: time.Millisecond})
				if !tt.ok {
					require.Error(t, err)
					assert.Contains(t, err.Error(), "would send the token and the thread across the network unencrypted; use https://")
					assert.Contains(t, err.Error(), "-"+threadsync.FlagAllowHTTP)
					assert.Nil(t, p)
					mu.Lock()
					assert.Empty(t, dialed)
					mu.Unlock()
					return
				}
				require.NoError(t, err)
				if !tt.allow {
					return
				}
				p.Start(context.Background())
				p.Saved(version(t, "t-1", 1))
				_ = stopWithin(p, 100*time.Millisecond)
				mu.Lock()
				defer mu.Unlock()
				require.NotEmpty(t, dialed, "the push was never dialled")
				assert.Equal(t, "192.0.2.1:8080", dialed[0])
			})
		})
	}
}

// TestDelay checks the backoff: doubling from the minimum, capped, half
// of it or more by the jitter, at least the server's Retry-After.
func TestDelay(t *testing.T) {
	t.Parallel()
	const lo, hi = 100 * time.Millisecond, 2 * time.Second
	tests := []struct {
		n          int
		retryAfter time.Duration
		jitter     float64
		want       time.Duration
	}{
		{1, 0, 1, 100 * time.Millisecond},
		{1, 0, 0, 50 * time.Millisecond},
		{2, 0, 1, 200 * time.Millisecond},
		{3, 0, 0.5, 300 * time.Millisecond},
		{5, 0, 1, 1600 * time.Millisecond},
		{6, 0, 1, 2 * time.Second},
		{60, 0, 1, 2 * time.Second},
		{1, 3 * time.Second, 1, 3 * time.Second},
		{6, time.Second, 1, 2 * time.Second},
		{1, time.Hour, 0, 5 * time.Minute},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, threadsync.Delay(tt.n, lo, hi, tt.retryAfter, tt.jitter), "attempt %d, Retry-After %v, jitter %v", tt.n, tt.retryAfter, tt.jitter)
	}
}

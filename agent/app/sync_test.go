package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

var (
	serverOnce sync.Once
	serverBin  string
	serverErr  error
)

// serverBinary builds cmd/server once for the tests that sync to it.
func serverBinary(t *testing.T) string {
	t.Helper()
	serverOnce.Do(func() {
		serverBin = filepath.Join(filepath.Dir(agentBin), "server")
		cmd := exec.Command("go", "build", "-o", serverBin, "../../cmd/server")
		cmd.Env = goEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			serverErr = fmt.Errorf("build the server: %v\n%s", err, out)
		}
	})
	require.NoError(t, serverErr)
	return serverBin
}

// syncServer is cmd/server run on a SQLite file at a fixed address,
// stopped and started again as the test says.
type syncServer struct {
	t      *testing.T
	args   []string // added to its flags
	db     string
	addr   string
	token  string
	cmd    *exec.Cmd
	stdout *proctest.Buffer
	stderr *proctest.Buffer
	done   chan struct{}
}

var tokenLine = regexp.MustCompile(`(?m)^token: (fsm_[A-Za-z0-9_-]+)$`)

// newSyncServer starts the server, with args added to its flags.
func newSyncServer(t *testing.T, args ...string) *syncServer {
	t.Helper()
	s := &syncServer{t: t, args: args, db: filepath.Join(t.TempDir(), "server.db"), addr: proctest.FreeAddr(t)}
	s.start()
	require.Eventually(t, func() bool { return tokenLine.MatchString(s.stdout.String()) }, 30*time.Second, 10*time.Millisecond, "no token printed")
	s.token = tokenLine.FindStringSubmatch(s.stdout.String())[1]
	t.Cleanup(func() {
		if s.cmd != nil {
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

func (s *syncServer) url() string { return "http://" + s.addr }

// start starts the server and waits until it answers.
func (s *syncServer) start() {
	s.t.Helper()
	s.stdout, s.stderr, s.done = &proctest.Buffer{}, &proctest.Buffer{}, make(chan struct{})
	s.cmd = exec.Command(serverBinary(s.t), append([]string{"-addr", s.addr, "-db", s.db}, s.args...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	require.NoError(s.t, s.cmd.Start())
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	require.Eventually(s.t, func() bool {
		resp, err := http.Get(s.url() + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 20*time.Millisecond, "the server does not answer: %s", s.stderr.String())
}

// stop stops the server with SIGTERM.
func (s *syncServer) stop() {
	s.t.Helper()
	require.NoError(s.t, s.cmd.Process.Signal(syscall.SIGTERM))
	<-s.done
	s.cmd = nil
}

// get returns GET path's status and body.
func (s *syncServer) get(path string) (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.url()+path, nil)
	require.NoError(s.t, err)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp.StatusCode, data
}

// TestSyncWhileServerRestarts runs an interactive session with -sync: the
// server stops after the first turn, the second turn goes on as if
// nothing happened (the pusher retries in the background), the server
// starts again on the same database, and at the end the server holds the
// whole thread, redacted, listed on its API.
func TestSyncWhileServerRestarts(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			srv := newSyncServer(t)
			e := newEnv(t, p, nil,
				fakellm.Reply{Text: "First answer."},
				fakellm.Reply{Text: "Second answer, the key is " + testKey},
				fakellm.Reply{Text: "Third answer."},
			)
			ctx, cancel := context.WithTimeout(context.Background(), runLimit)
			defer cancel()
			cmd := e.command(ctx, "-sync", srv.url())
			cmd.Env = append(cmd.Env, threadsync.TokenVar+"="+srv.token)
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			var stdout, stderr proctest.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			defer cmd.Process.Kill()
			say := func(msg, answer string) {
				t.Helper()
				_, err := io.WriteString(in, msg+"\n")
				require.NoError(t, err)
				require.Eventually(t, func() bool { return strings.Contains(stdout.String(), answer) }, runLimit, 10*time.Millisecond,
					"no %q; stderr:\n%s", answer, stderr.String())
			}
			say("One.", "First answer.")
			assert.Contains(t, stderr.String(), "agent: thread syncs to "+srv.url())
			id := e.onlyThread(t)
			// The first turn reaches the server.
			require.Eventually(t, func() bool { code, _ := srv.get("/api/threads/" + id); return code == http.StatusOK }, runLimit, 10*time.Millisecond)

			srv.stop()
			say("Two.", "Second answer")
			require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "does not answer") }, runLimit, 10*time.Millisecond,
				"the user is told the server is down; stderr:\n%s", stderr.String())
			srv.start()
			require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "answers again") }, 40*time.Second, 10*time.Millisecond,
				"the push goes through once the server is back; stderr:\n%s", stderr.String())
			say("Three.", "Third answer.")
			require.NoError(t, in.Close())
			require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
			assert.Contains(t, stderr.String(), "agent: thread "+id+" synced to "+srv.url())
			assert.Equal(t, 1, strings.Count(stderr.String(), "does not answer"), "said once: %s", stderr.String())

			code, body := srv.get("/api/threads/" + id)
			require.Equal(t, http.StatusOK, code, "%s", body)
			assert.NotContains(t, string(body), testKey)
			assert.NotContains(t, string(body), srv.token)
			var view struct {
				ID       string `json:"id"`
				Messages int    `json:"messages"`
				Thread   struct {
					ID       string            `json:"id"`
					Messages []json.RawMessage `json:"messages"`
				} `json:"thread"`
			}
			require.NoError(t, json.Unmarshal(body, &view))
			assert.Equal(t, id, view.Thread.ID)
			require.Len(t, view.Thread.Messages, 6, "three exchanges")
			assert.Contains(t, string(view.Thread.Messages[5]), "Third answer.")
			assert.Contains(t, string(view.Thread.Messages[3]), "[REDACTED]")

			// The thread as the server holds it is the thread as saved.
			local := e.state(t, id)
			assert.Len(t, messages(local), 6)

			code, body = srv.get("/api/threads")
			require.Equal(t, http.StatusOK, code)
			var list struct {
				Threads []struct {
					ID          string `json:"id"`
					FirstPrompt string `json:"first_prompt"`
					Messages    int    `json:"messages"`
				} `json:"threads"`
			}
			require.NoError(t, json.Unmarshal(body, &list))
			require.Len(t, list.Threads, 1)
			assert.Equal(t, id, list.Threads[0].ID)
			assert.Equal(t, "One.", list.Threads[0].FirstPrompt)
			assert.Equal(t, 6, list.Threads[0].Messages)
		})
	}
}

// TestSyncUsage refuses -sync without a token or with a URL that is not a
// server's.
func TestSyncUsage(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		token string
		want  string
	}{
		{"no token", []string{"-sync", "http://127.0.0.1:1"}, "", "set " + threadsync.TokenVar},
		{"not a URL", []string{"-sync", "127.0.0.1:8080"}, "tok", "give the server's base URL"},
		{"not for sessions", []string{"-sync", "http://h", "sessions"}, "tok", "-sync does not apply to sessions"},
		{"plain http to another machine", []string{"-sync", "http://192.0.2.1:8080"}, "tok",
			"agent: -sync: sync URL http://192.0.2.1:8080: plain http:// to 192.0.2.1 would send the token and the thread across the network unencrypted; use https://, or an http:// URL to this machine (127.0.0.1, [::1], localhost), or allow it with -sync-allow-http\n"},
		{"plain http to a name", []string{"-sync", "http://sync.example.com"}, "tok", "plain http:// to sync.example.com would send the token"},
		{"-sync-allow-http not for sessions", []string{"-sync-allow-http", "sessions"}, "tok", "-sync-allow-http does not apply to sessions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(threadsync.TokenVar, tt.token)
			var stdout, stderr strings.Builder
			code := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

// TestSyncPlainHTTP (issue 29 item 4): -sync with plain http:// to a host
// other than this machine is refused before anything is dialled, unless
// -sync-allow-http allows it. Every connection the agent makes to the
// host goes to a local proxy (HTTP_PROXY), which records it and answers
// itself: nothing is ever sent to the host.
func TestSyncPlainHTTP(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allowed=%v", allow), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []string
			proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Method+" "+r.URL.String()+" "+r.Header.Get("Authorization"))
				mu.Unlock()
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(http.StatusNoContent)
			})}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			go func() { _ = proxy.Serve(ln) }()
			t.Cleanup(func() { _ = proxy.Close() })

			e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."})
			args := []string{"-sync", "http://192.0.2.1:8080", "-p", "Hi."}
			if allow {
				args = append([]string{"-" + threadsync.FlagAllowHTTP}, args...)
			}
			res := e.runWith(t, "", []string{threadsync.TokenVar + "=fsm_plain-http-token", "HTTP_PROXY=http://" + ln.Addr().String(),
				"http_proxy=", "NO_PROXY=", "no_proxy="}, args...)
			mu.Lock()
			defer mu.Unlock()
			if !allow {
				assert.Equal(t, exitUsage, res.code)
				assert.Contains(t, res.stderr, "would send the token and the thread across the network unencrypted")
				assert.Empty(t, seen, "the agent sent something")
				assert.Empty(t, e.srv.Requests(), "the agent started")
				return
			}
			require.Equal(t, 0, res.code, res.stderr)
			require.NotEmpty(t, seen, "the push never left")
			assert.Regexp(t, `^PUT http://192\.0\.2\.1:8080/api/threads/\S+ Bearer fsm_plain-http-token$`, seen[0])
		})
	}
}

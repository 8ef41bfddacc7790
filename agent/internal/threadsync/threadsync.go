// Package threadsync pushes the coding agent's threads to the server
// (cmd/server) in the background: opt-in (the agent's -sync URL), never
// blocking a turn.
//
// A [Pusher] is fed after every save of the thread ([Pusher.Saved]: a copy
// is kept, nothing else); its one goroutine pushes the newest version it
// holds with PUT /api/threads/{id}, gzipped, redacted again of the
// secrets it was given (the thread as saved is redacted already: a sync
// must never carry the key), and versions saved while a push is in flight
// or waiting collapse into the newest. While the server is down, or
// answers 5xx, 408 or 429, the push is retried with exponential backoff
// and jitter, waiting at least what its Retry-After asks. The revision of
// a push is the thread's Updated time in nanoseconds, so a push repeated
// after a lost answer is a no-op at the server and an older one is
// refused (409: dropped, the newer one stands). Any other 4xx (a wrong
// token, a thread too large) is said once, and syncing stops for the
// session; the thread on disk is never touched. The copy pushed leaves
// the images' bytes out (their size and SHA-256 stand for them; see
// withoutImageBytes), so that screenshots neither pass the server's
// limit nor are sent again at every save. [Pusher.Stop] pushes what is left within the time it is given
// and says what could not be pushed: the agent pushes it when it next
// runs with -sync on that thread (a resumed thread is pushed at start).
package threadsync

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/internal/backoff"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// TokenVar is the environment variable that holds the server's API token
// (the one the server printed on its first start).
const TokenVar = "FSMGEN_SERVER_TOKEN"

// Default delays between the attempts of a push.
const (
	DefaultMinDelay = 500 * time.Millisecond
	DefaultMaxDelay = 30 * time.Second
)

// maxRetryAfter caps the wait a server's Retry-After may ask for.
const maxRetryAfter = 5 * time.Minute

// drainDelay caps the waits between attempts once Stop was called: what
// is left must be tried again within Stop's time.
const drainDelay = 250 * time.Millisecond

// Config is what a Pusher is made with.
type Config struct {
	// URL is the server's base URL, e.g. https://sync.example.com or
	// http://127.0.0.1:8080. Required. Plain http:// is refused for a
	// host other than loopback unless AllowHTTP says otherwise: the token
	// and the thread would cross the network in clear.
	URL string
	// AllowHTTP accepts a plain http:// URL to any host (a private
	// network the user trusts); the agent's -sync-allow-http.
	AllowHTTP bool
	// Token is the server's API token, sent as a bearer token.
	Token string
	// Secrets are replaced by "[REDACTED]" in what is pushed (see
	// agent/internal/redact), the API key and the token among them.
	Secrets []string
	// Client sends the requests; nil means one with a 30 s timeout.
	Client *http.Client
	// Notify tells the user about the sync, once per problem (the server
	// down, back, refusing); it is called from the pusher's goroutine.
	// nil says nothing.
	Notify func(msg string)
	// Logger receives a debug record per attempt; nil discards them.
	Logger *slog.Logger
	// MinDelay and MaxDelay bound the delays between attempts (the
	// defaults when zero).
	MinDelay, MaxDelay time.Duration
}

// Pusher pushes the newest saved version of a thread to the server: one
// thread per pusher (a session's), as versions of another would replace
// the one waiting. Make
// it with [New], run it with [Pusher.Start], feed it with [Pusher.Saved]
// and stop it with [Pusher.Stop].
type Pusher struct {
	cfg      Config
	base     *url.URL
	redactor *redact.Redactor
	log      *slog.Logger

	mu       sync.Mutex
	pending  *snapshot         // the newest version not handed to the goroutine yet
	lastRev  int64             // the last revision handed out
	src      []json.RawMessage // the messages of the last version handed out, as saved (see Saved)
	msgs     []json.RawMessage // the same, as pushed: without the images' bytes
	unpushed *snapshot         // the version the goroutine works on, nil once pushed
	off      bool              // syncing stopped for the session
	tooLarge bool              // it stopped as the server refused the thread as too large
	pushed   int               // versions the server acknowledged

	wake    chan struct{} // a version is pending (capacity 1)
	drain   chan struct{} // closed by Stop
	done    chan struct{} // closed when the goroutine ends
	cancel  context.CancelFunc
	started bool
	stopped sync.Once
}

// snapshot is a version of a thread to push.
type snapshot struct {
	t   threadwire.Thread
	rev int64
}

// New returns a pusher to the server at cfg.URL.
func New(cfg Config) (*Pusher, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("sync URL %q: give the server's base URL, http:// or https://, as in http://127.0.0.1:8080", cfg.URL)
	}
	if u.Scheme == "http" && !cfg.AllowHTTP && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("sync URL %s: plain http:// to %s would send the token and the thread across the network unencrypted; use https://, or an http:// URL to this machine (127.0.0.1, [::1], localhost), or allow it with -%s", cfg.URL, u.Hostname(), FlagAllowHTTP)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if cfg.MinDelay <= 0 {
		cfg.MinDelay = DefaultMinDelay
	}
	if cfg.MaxDelay < cfg.MinDelay {
		cfg.MaxDelay = max(cfg.MinDelay, DefaultMaxDelay)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Notify == nil {
		cfg.Notify = func(string) {}
	}
	p := &Pusher{cfg: cfg, base: u, redactor: redact.New(cfg.Secrets...), log: cfg.Logger,
		wake: make(chan struct{}, 1), drain: make(chan struct{}), done: make(chan struct{})}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p, nil
}

// FlagAllowHTTP is the agent's flag that sets Config.AllowHTTP.
const FlagAllowHTTP = "sync-allow-http"

// loopback reports whether host, as a URL names it, is this machine: a
// loopback address, or localhost. Nothing is looked up: a name that
// resolves to a loopback address is not taken for one.
func loopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// URL returns the server's base URL, as pushes use it.
func (p *Pusher) URL() string { return p.base.String() }

// Start starts the pusher's goroutine; [Pusher.Stop] ends it (as does
// ctx, which cuts short a push in flight).
func (p *Pusher) Start(ctx context.Context) {
	ctx, p.cancel = context.WithCancel(ctx)
	p.started = true
	go p.run(ctx)
}

// Saved keeps a copy of t, as just saved, to be pushed: it replaces any
// version not yet taken, and returns at once. It is the hook
// agentexec.Config.Saved takes.
//
// The copy of the messages costs what was added since the last save: a
// thread's messages are kept in a slice of the pusher's own that the
// next copy extends while the thread's messages start with the very same
// ones (the same bytes in memory: the agent only appends encoded
// messages, and encodes a message anew for any other change), and that
// is made afresh otherwise. The copies share that slice's array, into
// which only the newest one ever appends.
//
// The copy leaves the images' bytes out (see withoutImageBytes): each
// image is pushed as its name, media type, size and SHA-256.
func (p *Pusher) Saved(t *threadwire.Thread) {
	c := *t
	c.State = withoutImageBytes(t.State)
	c.QueuedInput = slices.Clone(t.QueuedInput)
	c.Ledger.Turns = slices.Clone(t.Ledger.Turns)
	c.Ledger.Models = slices.Clone(t.Ledger.Models)
	p.mu.Lock()
	if p.off {
		p.mu.Unlock()
		return
	}
	if !prefixOf(p.src, t.Messages) {
		p.src, p.msgs = nil, nil
	}
	for _, m := range t.Messages[len(p.src):] {
		p.src = append(p.src, m)
		p.msgs = append(p.msgs, withoutImageBytes(m))
	}
	c.Messages = p.msgs[:len(p.msgs):len(p.msgs)]
	rev := max(t.Updated.UnixNano(), p.lastRev+1)
	p.lastRev = rev
	p.pending = &snapshot{t: c, rev: rev}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// prefixOf reports whether msgs starts with the messages of prev, the
// same bytes in memory.
func prefixOf(prev, msgs []json.RawMessage) bool {
	if len(prev) > len(msgs) {
		return false
	}
	for i, m := range prev {
		n := msgs[i]
		if len(m) != len(n) || (len(m) > 0 && &m[0] != &n[0]) {
			return false
		}
	}
	return true
}

// Pushed reports how many versions the server acknowledged.
func (p *Pusher) Pushed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pushed
}

// Stop pushes what is left, trying until ctx is done, then stops the
// goroutine. It returns an error naming the thread whose last version
// was not pushed.
func (p *Pusher) Stop(ctx context.Context) error {
	if !p.started {
		return nil
	}
	p.stopped.Do(func() { close(p.drain) })
	select {
	case <-p.done:
	case <-ctx.Done():
		p.cancel()
		<-p.done
	}
	p.cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	left := p.unpushed
	if left == nil {
		left = p.pending
	}
	if left == nil {
		return nil
	}
	if p.tooLarge {
		return fmt.Errorf("thread %s was not synced to %s: it is larger than the server takes; it is kept whole on this machine (agent -resume %s), and once the server takes larger threads (its -max-thread-bytes) agent -resume %s -sync %s pushes it",
			left.t.ID, p.base, left.t.ID, left.t.ID, p.base)
	}
	return fmt.Errorf("thread %s was not synced to %s; it is pushed when the agent next runs on it with -sync (agent -resume %s -sync %s)", left.t.ID, p.base, left.t.ID, p.base)
}

// take hands the newest pending version to the goroutine.
func (p *Pusher) take() *snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != nil {
		p.unpushed, p.pending = p.pending, nil
	}
	return p.unpushed
}

// run is the goroutine: it pushes the versions as they come.
func (p *Pusher) run(ctx context.Context) {
	defer close(p.done)
	draining := false
	failing := false // a problem was said: say when it is over
	attempt := 0
	for {
		s := p.take()
		if s == nil {
			if draining {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-p.drain:
				draining = true
			case <-p.wake:
			}
			continue
		}
		res := p.push(ctx, s)
		p.log.Debug("thread sync", "thread", s.t.ID, "revision", s.rev, "attempt", attempt+1, "status", res.status, "err", res.err)
		switch res.kind {
		case pushed, dropped:
			p.mu.Lock()
			if p.unpushed == s {
				p.unpushed = nil
			}
			if res.kind == pushed {
				p.pushed++
			}
			p.mu.Unlock()
			if res.kind == dropped {
				p.cfg.Notify(res.message)
			} else if failing {
				p.cfg.Notify(fmt.Sprintf("sync: the server at %s answers again; thread %s is synced", p.base, s.t.ID))
			}
			failing, attempt = false, 0
			continue
		case refused:
			p.mu.Lock()
			p.off, p.pending = true, nil
			p.tooLarge = res.status == http.StatusRequestEntityTooLarge
			p.mu.Unlock()
			p.cfg.Notify(res.message)
			return
		}
		// retry
		if ctx.Err() != nil {
			return
		}
		if !failing {
			failing = true
			p.cfg.Notify(fmt.Sprintf("sync: %s; retrying in the background", res.message))
		}
		attempt++
		d := Delay(attempt, p.cfg.MinDelay, p.cfg.MaxDelay, res.retryAfter, rand.Float64())
		if draining {
			d = min(d, drainDelay)
		}
		drain := p.drain
		if draining {
			drain = nil
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-drain:
			draining = true
			timer.Stop() // try again at once
		case <-timer.C:
		}
	}
}

// Delay is the wait before attempt n (1 for the first retry): MinDelay
// doubled for each attempt after the first, at most MaxDelay, of which
// jitter (from 0 to 1) keeps a random half or more; at least retryAfter,
// the server's ask (at most 5 minutes).
func Delay(n int, minDelay, maxDelay, retryAfter time.Duration, jitter float64) time.Duration {
	d := backoff.Exponential(minDelay, maxDelay, n)
	d = d/2 + time.Duration(jitter*float64(d/2))
	return max(d, min(retryAfter, maxRetryAfter))
}

// The outcomes of a push.
type outcome int

const (
	pushed  outcome = iota // the server holds this version (or had it)
	retry                  // try again later
	dropped                // the server holds a newer version: this one is not pushed
	refused                // the server refuses the sync: stop
)

// result is how an attempt went.
type result struct {
	kind       outcome
	status     int
	err        error
	message    string        // for the user
	retryAfter time.Duration // the server's Retry-After
}

// push makes one attempt at pushing s.
func (p *Pusher) push(ctx context.Context, s *snapshot) result {
	raw, err := json.Marshal(&s.t)
	if err != nil {
		return result{kind: refused, err: err, message: fmt.Sprintf("sync: thread %s cannot be encoded (%v); sync is off for this session", s.t.ID, err)}
	}
	body, err := json.Marshal(threadwire.PushBody{Revision: s.rev, Thread: p.redactor.Bytes(raw)})
	if err != nil {
		return result{kind: refused, err: err, message: fmt.Sprintf("sync: thread %s cannot be encoded (%v); sync is off for this session", s.t.ID, err)}
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(body) // a bytes.Buffer does not fail
	_ = zw.Close()
	endpoint := p.base.JoinPath("api", "threads", s.t.ID).String()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, endpoint, &zipped)
	if err != nil {
		return result{kind: refused, err: err, message: fmt.Sprintf("sync: %v; sync is off for this session", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	if p.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.Token)
	}
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		return result{kind: retry, err: err, message: fmt.Sprintf("the server at %s does not answer (%s)", p.base, p.redactor.String(shortErr(err)))}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	res := result{status: resp.StatusCode}
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		res.kind = pushed
	case code == http.StatusConflict:
		res.kind = dropped
		res.message = fmt.Sprintf("sync: revision %d of thread %s was not pushed: %s", s.rev, s.t.ID, p.serverSays(resp, data))
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		res.kind = retry
		res.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		res.message = fmt.Sprintf("the server at %s answers %s", p.base, p.serverSays(resp, data))
	case code == http.StatusRequestEntityTooLarge:
		res.kind = refused
		res.message = fmt.Sprintf("sync: thread %s is larger than the server at %s takes (%s, for %s of JSON without the images' bytes); it is kept whole on this machine, and is not synced for the rest of this session: the server's -max-thread-bytes takes larger threads",
			s.t.ID, p.base, p.serverSays(resp, data), chat.FormatBytes(len(raw)))
	default:
		res.kind = refused
		res.message = fmt.Sprintf("sync: the server at %s refuses thread %s: %s; sync is off for this session (check -sync and %s)", p.base, s.t.ID, p.serverSays(resp, data), TokenVar)
	}
	return res
}

// serverSays is the server's answer in a few words: its status and the
// message of its JSON error, when there is one.
func (p *Pusher) serverSays(resp *http.Response, data []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	say := resp.Status
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		say += " (" + e.Error.Code + ": " + e.Error.Message + ")"
	}
	return p.redactor.String(say)
}

// shortErr is err without the request's method and URL, which the
// message says already.
func shortErr(err error) string {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err.Error()
	}
	return err.Error()
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date after
// now; 0 when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

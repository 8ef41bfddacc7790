package fakellm

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
)

// NewInMemory is [New] on an in-memory network instead of a loopback
// socket: each connection is a [net.Pipe], and only the client that
// [Server.Client] returns reaches the server. A test in a testing/synctest
// bubble can run it, which it cannot with a socket (a goroutine waiting
// on the network is not durably blocked: the bubble's clock would stand
// still). Everything above the connection is the real HTTP stack, the
// providers' SDKs included. Start the server inside the bubble; it closes
// when the test ends.
func NewInMemory(t testing.TB, provider Provider, replies ...Reply) *Server {
	t.Helper()
	s := &Server{provider: provider, replies: replies}
	s.startInMemory(t)
	return s
}

// startInMemory starts s on a new pipe listener.
func (s *Server) startInMemory(t testing.TB) {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	s.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.serve)}}
	s.Server.Start()
	s.client = &http.Client{Transport: &http.Transport{DialContext: l.dial}}
	t.Cleanup(s.Close)
}

// Client returns a client that reaches the server: for a server of
// [NewInMemory] its only way in, for the others a plain client.
func (s *Server) Client() *http.Client {
	if s.client != nil {
		return s.client
	}
	return s.Server.Client()
}

// Close shuts the server down, and for a server of [NewInMemory] closes
// the idle connections of its client, so that none of its goroutines
// outlives the test.
func (s *Server) Close() {
	s.Server.Close()
	if s.client != nil {
		s.client.CloseIdleConnections()
	}
}

// pipeListener is a net.Listener whose connections are the server ends of
// the pipes its dial makes.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// pipeAddr is the address of a pipe listener: the host of the server's URL.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "fakellm.invalid:80" }

// Accept implements net.Listener.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial connects to the listener, whatever the address; once the listener
// is closed it is refused, as a closed port refuses.
func (l *pipeListener) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		err := &net.OpError{Op: "dial", Net: network, Addr: pipeAddr{}, Err: syscall.ECONNREFUSED}
		return nil, closeBoth(client, server, err)
	case <-ctx.Done():
		return nil, closeBoth(client, server, ctx.Err())
	}
}

// closeBoth closes both ends of a pipe that was not handed out, and
// returns err.
func closeBoth(a, b net.Conn, err error) error {
	_ = a.Close()
	_ = b.Close()
	return err
}

package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInternalKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr, kind string
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fec0::1", "private"},
		{"::ffff:10.1.2.3", "private"},
		{"100.64.0.1", "shared (carrier-grade NAT)"},
		{"100.127.255.255", "shared (carrier-grade NAT)"},
		{"169.254.169.254", "cloud metadata"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"fd00:ec2::254", "cloud metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"febf::1", "link-local"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"240.0.0.1", "reserved"},
		{"198.18.0.1", "reserved"},
		{"192.0.0.8", "reserved"},
		{"::127.0.0.1", "reserved"},
		{"2001::1", "reserved"},
		{"64:ff9b::a00:1", "private"},              // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", "loopback"},            // NAT64 of 127.0.0.1
		{"64:ff9b:1::a9fe:a9fe", "cloud metadata"}, // local-use NAT64 of 169.254.169.254
		{"2002:7f00:1::1", "loopback"},             // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::", "cloud metadata"},     // 6to4 of 169.254.169.254
		// On the Internet.
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"100.128.0.1", ""},
		{"172.32.0.1", ""},
		{"169.255.0.1", ""},
		{"2606:4700::1111", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", ""},  // 6to4 of 8.8.8.8
		{"::ffff:1.1.1.1", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.kind, internalKind(netip.MustParseAddr(tt.addr)), tt.addr)
	}
}

func TestParseAllow(t *testing.T) {
	t.Parallel()
	g, err := ParseAllow(" 10.1.2.0/24, 127.0.0.1 ,[::1]:9000, Hooks.Internal:8443,::ffff:192.168.0.0/112,,")
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("192.168.0.0/16")}, g.prefixes)
	assert.Equal(t, []netip.AddrPort{netip.MustParseAddrPort("[::1]:9000")}, g.addrPorts)
	assert.Equal(t, map[string]bool{"hooks.internal:8443": true}, g.hostPorts)

	empty, err := ParseAllow("")
	require.NoError(t, err)
	assert.Equal(t, &Guard{}, empty)

	for _, bad := range []string{"10.0.0.0/33", "hooks.internal", "hooks.internal:0", "hooks.internal:70000", "127.0.0.1:x", "a b:80", "http://10.0.0.1/", "127.1:80"} {
		_, err := ParseAllow("10.0.0.0/8," + bad)
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), bad)
			assert.Contains(t, err.Error(), "give ones like")
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		allow, url string
		refused    string // the kind refused; "" when accepted
	}{
		{"", "https://example.com/hook", ""},
		{"", "http://hooks.internal:8443/x", ""}, // a name is checked when it is dialled
		{"", "http://93.184.216.34/x", ""},
		{"", "http://127.0.0.1:9000/", "loopback"},
		{"", "http://[::1]/", "loopback"},
		{"", "http://[::ffff:127.0.0.1]:80/", "loopback"},
		{"", "http://localhost/", "loopback"},
		{"", "http://LocalHost.:8080/", "loopback"},
		{"", "http://alerts.localhost/", "loopback"},
		{"", "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"", "http://[::ffff:a9fe:a9fe]/", "cloud metadata"},
		{"", "http://[fe80::1%25eth0]/", "link-local"},
		{"", "http://0.0.0.0:8080/", "unspecified"},
		{"", "http://[::]/", "unspecified"},
		{"", "https://10.0.0.5/hook", "private"},
		{"", "http://100.64.1.1/", "shared (carrier-grade NAT)"},
		{"", "http://[fd00::1]/", "private"},
		{"", "http://224.0.0.1/", "multicast"},
		// What the allow list names.
		{"127.0.0.1/32", "http://127.0.0.1:9000/", ""},
		{"127.0.0.0/8", "http://localhost:9000/", ""},
		{"::1", "http://localhost:9000/", ""},
		{"127.0.0.1:9000", "http://127.0.0.1:9000/", ""},
		{"127.0.0.1:9000", "http://127.0.0.1:9001/", "loopback"},
		{"127.0.0.1:80", "http://127.0.0.1/", ""},
		{"127.0.0.1:80", "https://127.0.0.1/", "loopback"},
		{"localhost:9000", "http://localhost:9000/", ""},
		{"10.1.2.0/24", "http://10.1.2.3/", ""},
		{"10.1.2.0/24", "http://10.1.3.3/", "private"},
		{"10.1.2.0/24", "http://[::ffff:10.1.2.3]/", ""},
		{"127.0.0.1", "http://[::1]/", "loopback"},
	}
	for _, tt := range tests {
		g, err := ParseAllow(tt.allow)
		require.NoError(t, err)
		err = g.CheckURL(tt.url)
		if tt.refused == "" {
			assert.NoError(t, err, "%s with %q", tt.url, tt.allow)
			continue
		}
		var r *RefusedError
		if assert.ErrorAs(t, err, &r, "%s with %q", tt.url, tt.allow) {
			assert.Equal(t, tt.refused, r.Kind, tt.url)
			assert.Contains(t, err.Error(), "-webhook-allow")
		}
	}
	var g Guard
	for _, bad := range []string{"ftp://example.com/x", "example.com/hook", "https:///hook", "http://:80/", "http://example.com:0/", "http://example.com:99999/"} {
		err := g.CheckURL(bad)
		assert.Error(t, err, bad)
		assert.False(t, IsRefused(err), bad)
	}
	for _, legacy := range []string{"http://2130706433/", "http://0x7f.1/", "http://127.1/", "http://0177.0.0.1/", "http://017700000001/"} {
		err := g.CheckURL(legacy)
		if assert.Error(t, err, legacy) {
			assert.Contains(t, err.Error(), "four decimal numbers", legacy)
		}
	}
}

// noDNS is a resolver that asks no server: a test sends nothing off the
// machine. Names in /etc/hosts (localhost) still resolve.
var noDNS = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("no DNS in tests")
}}

// dials records the addresses a guard let a dial connect to; any other
// than loopback is stopped there, so a test connects to nothing else.
type dials struct {
	mu sync.Mutex
	to []string
}

func (d *dials) hook(network string, to netip.AddrPort) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.to = append(d.to, to.String())
	if !to.Addr().Unmap().IsLoopback() {
		return errors.New("test: only loopback is dialled")
	}
	return nil
}

func (d *dials) seen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.to...)
}

func post(t *testing.T, g *Guard, url string) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"event": "test"}`))
	require.NoError(t, err)
	resp, err := g.Client(0).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// A refused address is refused in the dialer, before it connects: the
// hook, called for each address let through, sees none of them.
func TestDialRefusedBeforeConnect(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		"http://10.0.0.1:8080/",
		"http://[fd00:ec2::254]/",
		"http://100.64.0.1/",
		"http://127.0.0.1:9/",
		"http://localhost:9/", // a name: refused as what it resolves to
		"http://[::1]:9/",
		"http://0.0.0.0:9/",
	} {
		var d dials
		g := (&Guard{}).WithHooks(noDNS, d.hook)
		err := post(t, g, url)
		assert.True(t, IsRefused(err), "%s: %v", url, err)
		assert.Empty(t, d.seen(), url)
	}
}

// The allow list lets the listed addresses through, at the dial too.
func TestDialAllowed(t *testing.T) {
	t.Parallel()
	var got atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer hook.Close()
	port := hook.URL[strings.LastIndex(hook.URL, ":")+1:]
	for _, allow := range []string{"127.0.0.1", "127.0.0.0/8", "127.0.0.1:" + port, "localhost:" + port, "::ffff:127.0.0.1/128"} {
		g, err := ParseAllow(allow)
		require.NoError(t, err)
		var d dials
		url := hook.URL
		if strings.HasPrefix(allow, "localhost") {
			url = "http://localhost:" + port
		}
		require.NoError(t, post(t, g.WithHooks(noDNS, d.hook), url), allow)
		assert.Contains(t, d.seen(), "127.0.0.1:"+port, allow)
	}
	assert.Equal(t, int32(5), got.Load())
	// Another port of an address allowed at one port is refused.
	g, err := ParseAllow("127.0.0.1:1")
	require.NoError(t, err)
	assert.True(t, IsRefused(post(t, g.WithHooks(noDNS, nil), hook.URL)))
	assert.Equal(t, int32(5), got.Load())
}

// A redirect is dialled through the guard again: an allowed webhook that
// redirects to an internal address reaches nothing.
func TestRedirectChecked(t *testing.T) {
	t.Parallel()
	var other atomic.Int32
	unlisted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.Add(1) }))
	defer unlisted.Close()
	for _, target := range []string{
		"http://169.254.169.254/latest/meta-data/iam/",
		"http://[::ffff:169.254.169.254]/",
		"http://10.0.0.1/",
		unlisted.URL, // loopback, another port
		"http://localhost:" + unlisted.URL[strings.LastIndex(unlisted.URL, ":")+1:],
	} {
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
		}))
		g, err := ParseAllow(strings.TrimPrefix(redirect.URL, "http://"))
		require.NoError(t, err)
		var d dials
		err = post(t, g.WithHooks(noDNS, d.hook), redirect.URL)
		assert.True(t, IsRefused(err), "%s: %v", target, err)
		assert.Equal(t, []string{strings.TrimPrefix(redirect.URL, "http://")}, d.seen(), target)
		redirect.Close()
	}
	assert.Zero(t, other.Load(), "the unlisted server got no request")
}

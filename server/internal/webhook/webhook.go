// Package webhook keeps the server's webhooks (the alerts) off internal
// addresses. A webhook's URL is given by whoever holds an API token, so a
// server that posted anywhere would let them reach what only the server
// can: its own loopback services, the cloud's metadata endpoint, the
// private network behind it (server-side request forgery).
//
// A [Guard] refuses the loopback, private, link-local, unspecified,
// multicast, shared (carrier-grade NAT) and reserved addresses, IPv4 or
// IPv6, in any of their IPv6 forms (IPv4-mapped, NAT64, 6to4), unless its
// allow list names them. It checks twice: [Guard.CheckURL] when a URL is
// given, for an early error on an address written in the URL (or
// localhost), and [Guard.DialContext] on the address actually dialled,
// after DNS and on every redirect, in the dialer's Control hook, just
// before the connection is made. So a name that resolves to an internal
// address, now or after a change of its DNS records, and a redirect to
// one are refused too.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Guard decides which addresses webhooks may be posted to. The zero Guard
// allows no internal address.
type Guard struct {
	// What the allow list names: whole networks (an address alone is one
	// of a single address), an address at one port, a host name at one
	// port ("name:port", lower case).
	prefixes  []netip.Prefix
	addrPorts []netip.AddrPort
	hostPorts map[string]bool
	list      string

	// resolver resolves host names (net.DefaultResolver when nil);
	// connect, when set, is told each address a dial is about to connect
	// to, once the guard let it through, and an error it returns stops
	// the dial (tests: see what would be dialled, and dial nothing).
	resolver *net.Resolver
	connect  func(network string, to netip.AddrPort) error
}

// ParseAllow makes a Guard that allows the internal addresses of list, a
// comma-separated list of networks (10.1.2.0/24, fd00::/8), addresses
// (127.0.0.1, ::1: any port) and host:port pairs (127.0.0.1:9000,
// [::1]:9000, hooks.internal:8443: that port only; a name is allowed
// whatever it resolves to). An empty list allows none.
func ParseAllow(list string) (*Guard, error) {
	g := &Guard{list: strings.TrimSpace(list)}
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			g.prefixes = append(g.prefixes, unmapPrefix(p.Masked()))
			continue
		}
		if a, err := netip.ParseAddr(item); err == nil {
			a = a.Unmap().WithZone("")
			g.prefixes = append(g.prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		if ap, err := netip.ParseAddrPort(item); err == nil {
			g.addrPorts = append(g.addrPorts, netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port()))
			continue
		}
		host, port, err := net.SplitHostPort(item)
		if n, perr := strconv.ParseUint(port, 10, 16); err == nil && perr == nil && n > 0 && validHostName(host) {
			if g.hostPorts == nil {
				g.hostPorts = map[string]bool{}
			}
			g.hostPorts[hostPort(host, port)] = true
			continue
		}
		return nil, fmt.Errorf("%q is not a network, an address or a host:port: give ones like 10.1.2.0/24, 127.0.0.1 or hooks.internal:8443, separated by commas", item)
	}
	return g, nil
}

// String returns the allow list the guard was made from.
func (g *Guard) String() string { return g.list }

// WithHooks returns a copy of g that resolves names with r (when not nil)
// and tells connect each address a dial is about to connect to, once the
// guard let it through; an error connect returns stops the dial. Tests
// use it to see what would be dialled without dialling it.
func (g *Guard) WithHooks(r *net.Resolver, connect func(network string, to netip.AddrPort) error) *Guard {
	c := *g
	c.resolver, c.connect = r, connect
	return &c
}

// RefusedError is a webhook's address the guard refuses.
type RefusedError struct {
	Host string // as the URL wrote it, or the address dialled
	Kind string // what the address is: "loopback", "private", …
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is %s address: webhooks are not posted to internal addresses (start the server with -webhook-allow naming it to allow it)", e.Host, article(e.Kind))
}

func article(kind string) string {
	if strings.ContainsAny(kind[:1], "aeiou") {
		return "an " + kind
	}
	return "a " + kind
}

// CheckURL checks a webhook's URL when it is given: an http or https URL
// with a host, whose host, if it is an address (or localhost), the guard
// allows. A host name is checked when it is dialled.
func (g *Guard) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q is not an http or https URL", raw)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("%q: port %q is not a port number (1 to 65535)", raw, port)
	}
	if g.hostPorts[hostPort(host, port)] {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return g.check(netip.AddrPortFrom(a, uint16(n)), host)
	}
	if legacyIPv4(host) {
		return fmt.Errorf("%q: the host %q reads as an IPv4 address in an old form: write the address as four decimal numbers, or use a name", raw, host)
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// Resolved to a loopback address, whatever DNS says (RFC 6761).
		for _, a := range []netip.Addr{netip.IPv6Loopback(), netip.AddrFrom4([4]byte{127, 0, 0, 1})} {
			if g.check(netip.AddrPortFrom(a, uint16(n)), host) == nil {
				return nil
			}
		}
		return &RefusedError{Host: host, Kind: "loopback"}
	}
	return nil
}

// check returns a *RefusedError when to is an internal address that g does
// not allow; host names it in the error.
func (g *Guard) check(to netip.AddrPort, host string) error {
	a := to.Addr().Unmap().WithZone("")
	kind := internalKind(a)
	if kind == "" {
		return nil
	}
	for _, p := range g.prefixes {
		if p.Contains(a) {
			return nil
		}
	}
	for _, ap := range g.addrPorts {
		if ap.Addr() == a && ap.Port() == to.Port() {
			return nil
		}
	}
	return &RefusedError{Host: host, Kind: kind}
}

// DialContext dials addr ("host:port") as a net.Dialer does, refusing, just
// before it connects, an address the guard does not allow: each address
// the name resolves to is checked as it is tried. A host:port the allow
// list names is dialled whatever it resolves to.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Resolver: g.resolver}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	byName := g.hostPorts[hostPort(host, port)]
	d.ControlContext = func(ctx context.Context, network, address string, _ syscall.RawConn) error {
		to, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("webhook: cannot check the address %q: %w", address, err)
		}
		if !strings.HasPrefix(network, "tcp") {
			return fmt.Errorf("webhook: %s is dialled over %s: only TCP is allowed", address, network)
		}
		if !byName {
			if err := g.check(to, to.Addr().WithZone("").String()); err != nil {
				return err
			}
		}
		if g.connect != nil {
			return g.connect(network, to)
		}
		return nil
	}
	return d.DialContext(ctx, network, addr)
}

// Client returns an HTTP client whose every connection goes through
// DialContext, directly: no proxy from the environment (the guard would
// see the proxy's address, and the proxy would reach what it is asked
// to). It follows redirects, each dial checked again.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           g.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
	}
}

// IsRefused reports whether err, from a post, is the guard's refusal.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

func hostPort(host, port string) string {
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(host), "."), port)
}

// validHostName reports whether s is a DNS name: labels of letters,
// digits, - and _, not all digits at the end (that would be an address).
func validHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return !legacyIPv4(s)
}

// legacyIPv4 reports whether host is an IPv4 address in a form that the C
// library's resolver accepts and netip does not: one to four numbers,
// decimal, octal (0…) or hexadecimal (0x…), as in 127.1, 2130706433 or
// 0x7f.0.0.1.
func legacyIPv4(host string) bool {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 0, 32); err != nil {
			if len(p) < 2 || p[0] != '0' {
				return false
			}
			// 08 and 09 are read as decimal by some resolvers.
			if _, err := strconv.ParseUint(p, 10, 32); err != nil {
				return false
			}
		}
	}
	return true
}

package webhook

import "net/netip"

// The ranges netip has no method for (RFC 6890's special-purpose
// registries, and the cloud's metadata addresses), each with what it is.
var (
	metadata = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, …
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	}
	reserved = []struct {
		prefix netip.Prefix
		kind   string
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network"
		{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
		{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},  // IETF protocol assignments
		{netip.MustParsePrefix("198.18.0.0/15"), "reserved"}, // benchmarking
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},   // and 255.255.255.255, the broadcast
		{netip.MustParsePrefix("::/96"), "reserved"},         // IPv4-compatible (deprecated)
		{netip.MustParsePrefix("100::/64"), "reserved"},      // discard-only
		{netip.MustParsePrefix("2001::/32"), "reserved"},     // Teredo: its IPv4 address is hidden
		{netip.MustParsePrefix("fec0::/10"), "private"},      // site-local (deprecated)
	}
	// IPv6 forms that carry an IPv4 address, and the bit where it starts:
	// NAT64 (RFC 6052, and the local-use prefix of RFC 8215) and 6to4.
	embedding = []struct {
		prefix netip.Prefix
		at     int
	}{
		{netip.MustParsePrefix("64:ff9b::/96"), 96},
		{netip.MustParsePrefix("64:ff9b:1::/48"), 96},
		{netip.MustParsePrefix("2002::/16"), 16},
	}
)

// internalKind returns what kind of internal address a is ("loopback",
// "private", "link-local", "cloud metadata", "unspecified", "multicast",
// "shared (carrier-grade NAT)", "reserved"), or "" for an address on the
// Internet. An IPv4 address in an IPv6 form (IPv4-mapped, NAT64, 6to4) is
// what its IPv4 address is.
func internalKind(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return "invalid"
	}
	for _, m := range metadata {
		if a == m {
			return "cloud metadata"
		}
	}
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsPrivate():
		return "private"
	case a.IsMulticast():
		return "multicast"
	}
	for _, e := range embedding {
		if e.prefix.Contains(a) {
			b := a.As16()
			v4 := netip.AddrFrom4([4]byte(b[e.at/8 : e.at/8+4]))
			if kind := internalKind(v4); kind != "" {
				return kind
			}
			return ""
		}
	}
	for _, r := range reserved {
		if r.prefix.Contains(a) {
			return r.kind
		}
	}
	return ""
}

// unmapPrefix returns p with an IPv4-mapped address made IPv4.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

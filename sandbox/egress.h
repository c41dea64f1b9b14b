// Egress policy: the application-level guard for any future network exit. Default deny.
//
// An allowlist of exact host names (case-insensitive, a trailing dot ignored, no wildcards); only http
// and https URLs; userinfo in a URL is refused. IP literals in every spelling (dotted, decimal, octal,
// hex, short forms, IPv6, IPv4-mapped IPv6) are normalised before the check, and private, loopback,
// link-local, unspecified, multicast, CGNAT (100.64/10) and ULA (fc00::/7) addresses are refused. A
// host name is resolved once; every address it resolves to is checked, and the check returns the
// address to connect to, so a second lookup cannot rebind it.
//
// Decisions (each has a test in egress_test.cc):
// - Blocked ranges are one table in egress.cc (RFC 6890 special-purpose registries): besides those
//   above, 0/8, 192.0.0/24, the documentation and benchmarking nets, 240/4 and 255.255.255.255,
//   IPv4-compatible ::/96, discard 100::/64, 2001:db8::/32, site-local fec0::/10, Teredo 2001::/32
//   and local-use NAT64 64:ff9b:1::/48. IPv4 embedded in IPv4-mapped (::ffff:0:0/96), NAT64
//   (64:ff9b::/96) and 6to4 (2002::/16) addresses is checked against the IPv4 table, so
//   ::ffff:127.0.0.1 and 2002:7f00:1:: are loopback. IPv4-mapped addresses are normalised to IPv4.
// - A blocked address is refused even when it is on the allowlist: the allowlist names hosts to
//   reach, it cannot reopen the machine's own network.
// - An IP literal in a URL is allowed only if its canonical form is on the allowlist (allowlist
//   entries that are IP literals are normalised the same way, so "0x5db8d822" allows 93.184.216.34).
//   A public address is not enough: default deny.
// - Parsing is strict where parsers disagree (the root of SSRF bypasses): a URL with whitespace,
//   control or non-ASCII bytes, a backslash, a percent-encoded host, an IPv6 zone id, or a host
//   whose last label is numeric but is no valid IPv4 address (WHATWG: "1.2.3.256") is EINVAL.
//   Internationalised names must come as punycode (xn--...).
// - A name not on the allowlist is refused before it is resolved (no DNS query leaks it).
//
// Thread-safety: an EgressPolicy is immutable; Check may run from any thread if the resolver can.
#ifndef SANDBOX_EGRESS_H_
#define SANDBOX_EGRESS_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sandbox {

// Resolves a host name to its addresses as text ("93.184.216.34", "2606:2800::1").
using Resolver = std::function<absl::StatusOr<std::vector<std::string>>(absl::string_view host)>;

// The system resolver (getaddrinfo). ENOENT for an unknown name, ETRANSIENT for a temporary failure.
Resolver SystemResolver();

struct EgressDecision {
  std::string scheme;   // "http" or "https".
  std::string host;     // Normalised: lower case, no trailing dot; an IP literal in canonical form.
  int port = 0;         // The URL's port, or 80 / 443.
  std::string address;  // The checked address to connect to (canonical text).
};

class EgressPolicy {
 public:
  // Allowed hosts are normalised as Check normalises them; an empty list denies everything. An
  // entry that is not a valid host (a wildcard, a URL) is dropped: it can never match. Create()
  // reports such entries instead.
  explicit EgressPolicy(std::vector<std::string> allowed_hosts, Resolver resolver = SystemResolver());

  // As the constructor, but EINVAL naming the first entry that is not a valid host.
  static absl::StatusOr<EgressPolicy> Create(std::vector<std::string> allowed_hosts,
                                             Resolver resolver = SystemResolver());

  // OK with where to connect, or EPERM naming the reason, EINVAL for a malformed URL; a resolver
  // failure keeps its code (ENOENT, ETRANSIENT).
  absl::StatusOr<EgressDecision> Check(absl::string_view url) const;

 private:
  std::set<std::string> allowed_;
  Resolver resolver_;
};

}  // namespace sandbox

#endif  // SANDBOX_EGRESS_H_

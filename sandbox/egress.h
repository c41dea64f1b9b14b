// Egress policy: the application-level guard for any future network exit. Default deny.
//
// An allowlist of exact host names (case-insensitive, a trailing dot ignored, no wildcards); only http
// and https URLs; userinfo in a URL is refused. IP literals in every spelling (dotted, decimal, octal,
// hex, short forms, IPv6, IPv4-mapped IPv6) are normalised before the check, and private, loopback,
// link-local, unspecified, multicast, CGNAT (100.64/10) and ULA (fc00::/7) addresses are refused. A
// host name is resolved once; every address it resolves to is checked, and the check returns the
// address to connect to, so a second lookup cannot rebind it.
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

// The system resolver (getaddrinfo).
Resolver SystemResolver();

struct EgressDecision {
  std::string scheme;   // "http" or "https".
  std::string host;     // Normalised: lower case, no trailing dot; an IP literal in canonical form.
  int port = 0;
  std::string address;  // The checked address to connect to (canonical text).
};

class EgressPolicy {
 public:
  // Allowed hosts are normalised as Check normalises them; an empty list denies everything.
  explicit EgressPolicy(std::vector<std::string> allowed_hosts, Resolver resolver = SystemResolver());

  // OK with where to connect, or EPERM naming the reason, EINVAL for a malformed URL.
  absl::StatusOr<EgressDecision> Check(absl::string_view url) const;

 private:
  std::set<std::string> allowed_;
  Resolver resolver_;
};

}  // namespace sandbox

#endif  // SANDBOX_EGRESS_H_

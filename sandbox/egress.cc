#include "sandbox/egress.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sandbox/errors.h"
#include "sandbox/quote.h"
#include "sandbox/status_macros.h"

namespace sandbox {
namespace {

// An IPv4 address in bytes[0..3], or an IPv6 address in bytes[0..15].
struct Address {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};
};

// One special-purpose range (RFC 6890 and its successors), as text so the table reads as the RFCs.
struct BlockedRange {
  const char* prefix;
  int bits;
  const char* reason;
};

constexpr BlockedRange kBlockedV4[] = {
    {"0.0.0.0", 8, "unspecified (\"this network\")"},
    {"10.0.0.0", 8, "private"},
    {"100.64.0.0", 10, "CGNAT shared address space"},
    {"127.0.0.0", 8, "loopback"},
    {"169.254.0.0", 16, "link-local (cloud metadata lives at 169.254.169.254)"},
    {"172.16.0.0", 12, "private"},
    {"192.0.0.0", 24, "IETF protocol assignments"},
    {"192.0.2.0", 24, "documentation"},
    {"192.168.0.0", 16, "private"},
    {"198.18.0.0", 15, "benchmarking"},
    {"198.51.100.0", 24, "documentation"},
    {"203.0.113.0", 24, "documentation"},
    {"224.0.0.0", 4, "multicast"},
    {"255.255.255.255", 32, "broadcast"},
    {"240.0.0.0", 4, "reserved"},
};

constexpr BlockedRange kBlockedV6[] = {
    {"::", 128, "unspecified"},
    {"::1", 128, "loopback"},
    {"::", 96, "IPv4-compatible (deprecated)"},
    {"64:ff9b:1::", 48, "local-use NAT64"},
    {"100::", 64, "discard-only"},
    {"2001::", 32, "Teredo tunnel"},
    {"2001:db8::", 32, "documentation"},
    {"fc00::", 7, "unique local (ULA)"},
    {"fe80::", 10, "link-local"},
    {"fec0::", 10, "site-local (deprecated)"},
    {"ff00::", 8, "multicast"},
};

// IPv6 ranges that carry an IPv4 address; the IPv4 address is judged by kBlockedV4.
struct EmbeddingRange {
  const char* prefix;
  int bits;
  int v4_offset;  // Byte offset of the embedded IPv4 address.
  const char* name;
};

constexpr EmbeddingRange kEmbeddingV6[] = {
    {"::ffff:0:0", 96, 12, "IPv4-mapped"},
    {"64:ff9b::", 96, 12, "NAT64"},
    {"2002::", 16, 2, "6to4"},
};

Address ParseTableAddress(const char* text) {
  Address a;
  a.v6 = std::strchr(text, ':') != nullptr;
  // The table is ours and valid; a typo would show as a test failure, not undefined behaviour.
  ::inet_pton(a.v6 ? AF_INET6 : AF_INET, text, a.bytes.data());
  return a;
}

bool InPrefix(const Address& a, const Address& prefix, int bits) {
  for (int i = 0; i < bits; ++i) {
    const int byte = i / 8, bit = 7 - i % 8;
    if (((a.bytes[byte] >> bit) & 1) != ((prefix.bytes[byte] >> bit) & 1)) return false;
  }
  return true;
}

Address V4At(const Address& a, int offset) {
  Address v4;
  std::copy_n(a.bytes.begin() + offset, 4, v4.bytes.begin());
  return v4;
}

std::string ToText(const Address& a) {
  char buf[INET6_ADDRSTRLEN];
  ::inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof(buf));
  return buf;
}

// IPv4-mapped IPv6 names an IPv4 host; it is normalised to that host.
Address Canonical(const Address& a) {
  static const Address mapped = ParseTableAddress("::ffff:0:0");
  return a.v6 && InPrefix(a, mapped, 96) ? V4At(a, 12) : a;
}

// Why `a` is blocked ("loopback (127.0.0.0/8)"), or nullopt if it may be reached.
std::optional<std::string> BlockReason(const Address& a) {
  if (!a.v6) {
    for (const BlockedRange& r : kBlockedV4) {
      if (InPrefix(a, ParseTableAddress(r.prefix), r.bits)) {
        return absl::StrCat(r.reason, " (", r.prefix, "/", r.bits, ")");
      }
    }
    return std::nullopt;
  }
  for (const EmbeddingRange& r : kEmbeddingV6) {
    if (!InPrefix(a, ParseTableAddress(r.prefix), r.bits)) continue;
    const Address v4 = V4At(a, r.v4_offset);
    if (auto inner = BlockReason(v4)) {
      return absl::StrCat(r.name, " ", ToText(v4), ", which is ", *inner);
    }
    return std::nullopt;
  }
  for (const BlockedRange& r : kBlockedV6) {
    if (InPrefix(a, ParseTableAddress(r.prefix), r.bits)) {
      return absl::StrCat(r.reason, " (", r.prefix, "/", r.bits, ")");
    }
  }
  return std::nullopt;
}

absl::Status Invalid(absl::string_view what, absl::string_view text) {
  return MakeError(ErrorCode::kEINVAL, absl::StrCat(what, ": ", Quote(text)));
}

absl::Status Denied(absl::string_view message) { return MakeError(ErrorCode::kEPERM, message); }

// One part of an IPv4 literal as the WHATWG URL standard and inet_aton read it: "0x" prefix hex,
// a leading "0" octal, otherwise decimal. nullopt if it is no number or exceeds 2^32.
std::optional<uint64_t> ParseIpv4Part(absl::string_view part) {
  if (part.empty()) return std::nullopt;
  int radix = 10;
  if (part.size() >= 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
    radix = 16;
    part.remove_prefix(2);
  } else if (part.size() >= 2 && part[0] == '0') {
    radix = 8;
    part.remove_prefix(1);
  }
  uint64_t value = 0;
  for (char c : part) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (radix == 16 && absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      digit = absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    } else {
      return std::nullopt;
    }
    if (digit >= radix) return std::nullopt;
    value = value * radix + digit;
    if (value > 0xFFFFFFFFull) return std::nullopt;
  }
  return value;  // "0x" alone is 0, as in WHATWG.
}

// WHATWG's "ends in a number": the last label is decimal digits or 0x-hex. Such a host is an IPv4
// literal or invalid; it is never looked up as a name.
bool EndsInNumber(absl::string_view host) {
  const size_t dot = host.rfind('.');
  const absl::string_view last = dot == absl::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty()) return false;
  const auto all = [](absl::string_view s, auto pred) {
    return std::all_of(s.begin(), s.end(), [&](char c) { return pred(static_cast<unsigned char>(c)); });
  };
  if (all(last, absl::ascii_isdigit)) return true;
  // A number too large for IPv4 still "ends in a number", so it is refused, not looked up.
  return absl::StartsWithIgnoreCase(last, "0x") && all(last.substr(2), absl::ascii_isxdigit);
}

// "127.1", "0177.0.0.1", "0x7f000001", "2130706433": one to four parts, the last filling the rest.
std::optional<Address> ParseIpv4Literal(absl::string_view host) {
  const std::vector<absl::string_view> parts = absl::StrSplit(host, '.');
  if (parts.empty() || parts.size() > 4) return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::optional<uint64_t> part = ParseIpv4Part(parts[i]);
    if (!part.has_value()) return std::nullopt;
    const bool last = i + 1 == parts.size();
    const int last_bits = 8 * static_cast<int>(5 - parts.size());
    if (!last && *part > 255) return std::nullopt;
    if (last && *part >= (uint64_t{1} << last_bits)) return std::nullopt;
    value = last ? (value << last_bits) | *part : (value << 8) | *part;
  }
  Address a;
  for (int i = 0; i < 4; ++i) a.bytes[i] = static_cast<uint8_t>(value >> (24 - 8 * i));
  return a;
}

std::optional<Address> ParseIpv6Literal(absl::string_view text) {
  Address a;
  a.v6 = true;
  const std::string s(text);
  if (::inet_pton(AF_INET6, s.c_str(), a.bytes.data()) != 1) return std::nullopt;
  return a;
}

// A host name: labels of 1-63 letters, digits, '-' or '_', 253 bytes in all.
bool IsValidName(absl::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty() || label.size() > 63) return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
    }
  }
  return true;
}

// A host as written in a URL or an allowlist, normalised.
struct Host {
  std::string text;                // Lower case, no trailing dot, or the canonical literal.
  std::optional<Address> literal;  // Set for an IP literal.
};

// `bracketed`: the host came from "[...]" and must be IPv6.
absl::StatusOr<Host> NormaliseHost(absl::string_view raw, bool bracketed) {
  if (raw.empty()) return Invalid("URL has no host", raw);
  if (raw.find('%') != absl::string_view::npos) {
    return Invalid("percent-encoding and IPv6 zone ids are not allowed in a host", raw);
  }
  if (bracketed || raw.find(':') != absl::string_view::npos) {
    std::optional<Address> a = ParseIpv6Literal(raw);
    if (!a.has_value()) return Invalid("malformed IPv6 address", raw);
    const Address canonical = Canonical(*a);
    return Host{ToText(canonical), canonical};
  }
  std::string host = absl::AsciiStrToLower(raw);
  if (absl::EndsWith(host, ".")) host.pop_back();
  if (EndsInNumber(host)) {
    std::optional<Address> a = ParseIpv4Literal(host);
    if (!a.has_value()) return Invalid("malformed IPv4 address", raw);
    return Host{ToText(*a), a};
  }
  if (!IsValidName(host)) {
    return Invalid("malformed host name (letters, digits, '-', '_' and dots; IDN as punycode)", raw);
  }
  return Host{std::move(host), std::nullopt};
}

// An address a resolver returned: strict text forms only (inet_pton), IPv4-mapped normalised.
std::optional<Address> ParseResolvedAddress(const std::string& text) {
  Address a;
  if (::inet_pton(AF_INET, text.c_str(), a.bytes.data()) == 1) return a;
  if (std::optional<Address> v6 = ParseIpv6Literal(text)) return Canonical(*v6);
  return std::nullopt;
}

struct ParsedUrl {
  std::string scheme;
  absl::string_view host;
  bool bracketed = false;
  int port = 0;
};

absl::StatusOr<int> ParsePort(absl::string_view text, absl::string_view url) {
  if (text.empty()) return Invalid("empty port in URL", url);
  int port = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return Invalid("port is not a number", text);
    port = port * 10 + (c - '0');
    if (port > 65535) return Invalid("port out of range 1-65535", text);
  }
  if (port == 0) return Invalid("port out of range 1-65535", text);
  return port;
}

absl::StatusOr<ParsedUrl> ParseUrl(absl::string_view url) {
  for (char c : url) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return Invalid("URL contains whitespace, control or non-ASCII bytes", url);
    // WHATWG reads '\' as '/' in http(s) URLs, other parsers as a host byte: refuse the ambiguity.
    if (c == '\\') return Invalid("backslash not allowed in URL", url);
  }
  const size_t sep = url.find("://");
  if (sep == absl::string_view::npos || sep == 0) {
    return Invalid("malformed URL (expected scheme://host[:port]/path)", url);
  }
  ParsedUrl parsed;
  parsed.scheme = absl::AsciiStrToLower(url.substr(0, sep));
  if (parsed.scheme != "http" && parsed.scheme != "https") {
    return Denied(absl::StrCat("scheme not allowed: ", Quote(parsed.scheme),
                               " (only http and https)"));
  }
  absl::string_view authority = url.substr(sep + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (authority.find('@') != absl::string_view::npos) {
    // The message does not echo the URL: the userinfo may hold a password.
    return Denied("userinfo (user:password@) not allowed in URL");
  }
  absl::string_view port_text;
  bool has_port = false;
  if (absl::StartsWith(authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return Invalid("unclosed '[' in URL host", url);
    parsed.host = authority.substr(1, close - 1);
    parsed.bracketed = true;
    absl::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return Invalid("unexpected text after ']' in URL host", url);
      port_text = rest.substr(1);
      has_port = true;
    }
  } else {
    const size_t colon = authority.find(':');
    parsed.host = authority.substr(0, colon);
    if (colon != absl::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
  }
  if (has_port) {
    SB_ASSIGN_OR_RETURN(parsed.port, ParsePort(port_text, url));
  } else {
    parsed.port = parsed.scheme == "https" ? 443 : 80;
  }
  return parsed;
}

// The allowlist form of `entry`, or EINVAL. Accepts "[::1]" and "::1" alike.
absl::StatusOr<std::string> NormaliseAllowEntry(absl::string_view entry) {
  if (entry.find('*') != absl::string_view::npos) {
    return Invalid("wildcards are not supported in the egress allowlist", entry);
  }
  const bool bracketed = absl::StartsWith(entry, "[") && absl::EndsWith(entry, "]");
  if (bracketed) entry = entry.substr(1, entry.size() - 2);
  SB_ASSIGN_OR_RETURN(Host host, NormaliseHost(entry, bracketed));
  return host.text;
}

}  // namespace

EgressPolicy::EgressPolicy(std::vector<std::string> allowed_hosts, Resolver resolver)
    : resolver_(std::move(resolver)) {
  for (const std::string& entry : allowed_hosts) {
    if (absl::StatusOr<std::string> host = NormaliseAllowEntry(entry); host.ok()) {
      allowed_.insert(*std::move(host));
    }
  }
}

absl::StatusOr<EgressPolicy> EgressPolicy::Create(std::vector<std::string> allowed_hosts,
                                                  Resolver resolver) {
  for (const std::string& entry : allowed_hosts) {
    SB_RETURN_IF_ERROR(NormaliseAllowEntry(entry).status());
  }
  return EgressPolicy(std::move(allowed_hosts), std::move(resolver));
}

absl::StatusOr<EgressDecision> EgressPolicy::Check(absl::string_view url) const {
  SB_ASSIGN_OR_RETURN(const ParsedUrl parsed, ParseUrl(url));
  SB_ASSIGN_OR_RETURN(const Host host, NormaliseHost(parsed.host, parsed.bracketed));
  EgressDecision decision{parsed.scheme, host.text, parsed.port, ""};
  if (host.literal.has_value()) {
    if (std::optional<std::string> why = BlockReason(*host.literal)) {
      return Denied(absl::StrCat("address blocked: ", host.text, " is ", *why));
    }
  }
  if (!allowed_.contains(host.text)) {
    return Denied(absl::StrCat("host not on the egress allowlist: ", Quote(host.text),
                               allowed_.empty() ? " (the allowlist is empty: all egress denied)"
                                                : ""));
  }
  if (host.literal.has_value()) {
    decision.address = host.text;
    return decision;
  }
  absl::StatusOr<std::vector<std::string>> resolved = resolver_(host.text);
  if (!resolved.ok()) {
    return MakeError(CodeOf(resolved.status()),
                     absl::StrCat("resolving ", Quote(host.text), ": ", resolved.status().message()));
  }
  if (resolved->empty()) {
    return MakeError(ErrorCode::kENOENT, absl::StrCat("host ", Quote(host.text), " has no address"));
  }
  // Every address, not just the first: a name that answers with one public and one private
  // address is how DNS rebinding reaches a private one.
  for (const std::string& text : *resolved) {
    const std::optional<Address> a = ParseResolvedAddress(text);
    if (!a.has_value()) {
      return Denied(absl::StrCat("resolver returned an unparsable address for ", Quote(host.text),
                                 ": ", Quote(text)));
    }
    if (std::optional<std::string> why = BlockReason(*a)) {
      return Denied(absl::StrCat("host ", Quote(host.text), " resolves to a blocked address: ",
                                 ToText(*a), " is ", *why));
    }
    if (decision.address.empty()) decision.address = ToText(*a);
  }
  return decision;
}

Resolver SystemResolver() {
  return [](absl::string_view host) -> absl::StatusOr<std::vector<std::string>> {
    const std::string name(host);
    struct addrinfo hints;
    std::memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo* result = nullptr;
    const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &result);
    if (rc != 0) {
      const std::string what = absl::StrCat("getaddrinfo(", Quote(name), ")");
      switch (rc) {
        case EAI_NONAME:
          return MakeError(ErrorCode::kENOENT, absl::StrCat(what, ": ", ::gai_strerror(rc)));
        case EAI_AGAIN:
          return MakeError(ErrorCode::kETRANSIENT, absl::StrCat(what, ": ", ::gai_strerror(rc)));
        case EAI_SYSTEM:
          return ErrnoError(errno, what);
        default:
          return MakeError(ErrorCode::kEIO, absl::StrCat(what, ": ", ::gai_strerror(rc)));
      }
    }
    std::vector<std::string> addresses;
    for (const struct addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) {
      char buf[INET6_ADDRSTRLEN] = {};
      const void* src = nullptr;
      if (ai->ai_family == AF_INET) {
        src = &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr;
      } else if (ai->ai_family == AF_INET6) {
        src = &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr;
      }
      if (src == nullptr || ::inet_ntop(ai->ai_family, src, buf, sizeof(buf)) == nullptr) continue;
      if (std::find(addresses.begin(), addresses.end(), buf) == addresses.end()) {
        addresses.emplace_back(buf);
      }
    }
    ::freeaddrinfo(result);
    return addresses;
  };
}

}  // namespace sandbox

// Red-team group `network` (policy level): EgressPolicy (sandbox/egress.h) against the URL and address
// tricks used for SSRF and DNS rebinding. No packet is sent: resolution goes through a fake resolver
// that records every lookup. The kernel-level proof (net namespace) is in the hardening group.
//
// Several cases allowlist the very host they attack ("127.0.0.1", "example.com" resolving to a private
// address), so that the default deny cannot be what refuses them: the address check must.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "redteam/testing.h"
#include "sandbox/egress.h"
#include "sandbox/errors.h"

namespace redteam {
namespace {

using sandbox::EgressPolicy;

// A resolver answering from a table, counting lookups per host. Unknown names fail like NXDOMAIN.
class FakeDns {
 public:
  FakeDns& Add(const std::string& host, std::vector<std::string> addresses) {
    answers_[host].push_back(std::move(addresses));
    return *this;
  }
  // Each lookup of `host` returns the next answer added for it (the last one repeats): lets a case
  // answer "public" first and "loopback" second, as a rebinding attacker's DNS server does.
  sandbox::Resolver resolver() {
    return [this](absl::string_view host) -> absl::StatusOr<std::vector<std::string>> {
      const std::string key(host);
      const int n = lookups_[key]++;
      auto it = answers_.find(key);
      if (it == answers_.end()) return sandbox::MakeError(sandbox::ErrorCode::kENOENT, "NXDOMAIN");
      const auto& seq = it->second;
      return seq[std::min<size_t>(n, seq.size() - 1)];
    };
  }
  int lookups(const std::string& host) const {
    auto it = lookups_.find(host);
    return it == lookups_.end() ? 0 : it->second;
  }
  int total_lookups() const {
    int total = 0;
    for (const auto& [host, n] : lookups_) total += n;
    return total;
  }

 private:
  std::map<std::string, std::vector<std::vector<std::string>>> answers_;
  std::map<std::string, int> lookups_;
};

constexpr char kPublic[] = "93.184.216.34";

class NetworkTest : public ::testing::Test {
 protected:
  // The allowlisted host `example.com` resolves to `addresses`; the policy must refuse the URL.
  void ExpectNameRefused(std::vector<std::string> addresses) {
    FakeDns dns;
    dns.Add("example.com", addresses);
    EgressPolicy policy({"example.com"}, dns.resolver());
    std::string all;
    for (const std::string& a : addresses) all += a + " ";
    EXPECT_EQ(CodeName(policy.Check("https://example.com/")), "EPERM") << "resolved to " << all;
  }
  // `url`'s host is an IP literal that normalises to `canonical`, which is allowlisted; the policy
  // must still refuse it because of the address range.
  void ExpectLiteralRefused(const std::string& url, const std::string& canonical) {
    FakeDns dns;
    EgressPolicy policy({canonical}, dns.resolver());
    EXPECT_EQ(CodeName(policy.Check(url)), "EPERM") << url;
    EXPECT_EQ(dns.total_lookups(), 0) << "an IP literal must not be sent to DNS: " << url;
  }
};

// Control: the policy does let an allowlisted public host through, and says where to connect. Without
// it every refusal below could come from a policy that refuses everything.
TEST_F(NetworkTest, AllowlistedPublicHostIsAllowedWithTheCheckedAddress) {
  FakeDns dns;
  dns.Add("example.com", {kPublic});
  EgressPolicy policy({"example.com"}, dns.resolver());
  absl::StatusOr<sandbox::EgressDecision> d = policy.Check("https://example.com/path?q=1");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->scheme, "https");
  EXPECT_EQ(d->host, "example.com");
  EXPECT_EQ(d->port, 443);
  EXPECT_EQ(d->address, kPublic);
}

// Incident: an empty allowlist was read as "no restriction".
TEST_F(NetworkTest, EmptyAllowlistDeniesEverything) {
  FakeDns dns;
  dns.Add("example.com", {kPublic});
  EgressPolicy policy({}, dns.resolver());
  EXPECT_EQ(CodeName(policy.Check("https://example.com/")), "EPERM");
  EXPECT_EQ(CodeName(policy.Check(std::string("http://") + kPublic + "/")), "EPERM");
}

// Incident: the allowlist matched by suffix or substring; "example.com.evil.net" and
// "evilexample.com" got through. Matching is exact; case and a trailing dot are normalised.
TEST_F(NetworkTest, AllowlistIsExactNotSuffixOrSubstring) {
  FakeDns dns;
  for (const char* h : {"example.com.evil.net", "evilexample.com", "sub.example.com", "example.co",
                        "example.com"}) {
    dns.Add(h, {kPublic});
  }
  EgressPolicy policy({"example.com"}, dns.resolver());
  for (const char* url : {"https://example.com.evil.net/", "https://evilexample.com/",
                          "https://sub.example.com/", "https://example.co/"}) {
    EXPECT_EQ(CodeName(policy.Check(url)), "EPERM") << url;
  }
  EXPECT_TRUE(policy.Check("https://EXAMPLE.com/").ok()) << "host names are case-insensitive";
  EXPECT_TRUE(policy.Check("https://example.com./").ok()) << "a trailing dot names the same host";
}

// Incident: a host that is not allowlisted was still looked up, leaking data to the attacker's DNS
// server through the query name (DNS exfiltration). Denied names must never reach the resolver.
TEST_F(NetworkTest, DeniedNameIsNeverResolved) {
  FakeDns dns;
  dns.Add("secret-data.attacker.example", {kPublic});
  EgressPolicy policy({"example.com"}, dns.resolver());
  EXPECT_EQ(CodeName(policy.Check("https://secret-data.attacker.example/")), "EPERM");
  EXPECT_EQ(dns.total_lookups(), 0);
}

// Incident: SSRF to a service on loopback (the seed's first bypass, 13.6.2).
TEST_F(NetworkTest, LoopbackIsRefused) {
  ExpectLiteralRefused("http://127.0.0.1/", "127.0.0.1");
  ExpectLiteralRefused("http://127.0.0.1:8080/admin", "127.0.0.1");
  ExpectLiteralRefused("http://127.255.255.254/", "127.255.255.254");
  ExpectNameRefused({"127.0.0.1"});
}

// Incident: "localhost" allowlisted for a dev server resolved to loopback in production.
TEST_F(NetworkTest, LocalhostResolvingToLoopbackIsRefusedEvenIfAllowlisted) {
  FakeDns dns;
  dns.Add("localhost", {"127.0.0.1", "::1"});
  EgressPolicy policy({"localhost"}, dns.resolver());
  EXPECT_EQ(CodeName(policy.Check("http://localhost:3000/")), "EPERM");
}

// Incident: the IPv6 loopback "[::1]" passed an IPv4-only check.
TEST_F(NetworkTest, Ipv6LoopbackIsRefused) {
  ExpectLiteralRefused("http://[::1]/", "::1");
  ExpectLiteralRefused("http://[0:0:0:0:0:0:0:1]/", "::1");
  ExpectNameRefused({"::1"});
}

// Incident: SSRF into the office network through RFC 1918 addresses.
TEST_F(NetworkTest, PrivateRangesAreRefused) {
  for (const char* a : {"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255",
                        "192.168.0.1", "192.168.255.255"}) {
    ExpectNameRefused({a});
    ExpectLiteralRefused(std::string("http://") + a + "/", a);
  }
}

// Incident: the range check was off by one block: 172.32.0.0 and 100.128.0.0 are public, and a check
// that refuses them is as wrong as one that lets 172.31/100.127 through.
TEST_F(NetworkTest, RangeBoundariesAreExact) {
  for (const char* a : {"172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1",
                        "11.0.0.1", "192.169.0.1"}) {
    FakeDns dns;
    dns.Add("example.com", {a});
    EgressPolicy policy({"example.com"}, dns.resolver());
    absl::StatusOr<sandbox::EgressDecision> d = policy.Check("https://example.com/");
    EXPECT_TRUE(d.ok()) << a << " is public: " << d.status();
  }
}

// Incident: cloud metadata at 169.254.169.254 handed out instance credentials (seed 13.6.2).
TEST_F(NetworkTest, CloudMetadataLinkLocalIsRefused) {
  ExpectLiteralRefused("http://169.254.169.254/latest/meta-data/", "169.254.169.254");
  ExpectNameRefused({"169.254.169.254"});
  ExpectLiteralRefused("http://[fe80::1]/", "fe80::1");
  ExpectLiteralRefused("http://[fd00:ec2::254]/", "fd00:ec2::254");  // AWS IPv6 metadata (ULA).
}

// Incident: "http://2130706433/" (127.0.0.1 as one decimal number) passed a dotted-quad check.
TEST_F(NetworkTest, DecimalIpSpellingIsNormalisedAndRefused) {
  ExpectLiteralRefused("http://2130706433/", "127.0.0.1");
  ExpectLiteralRefused("http://2852039166/", "169.254.169.254");
  ExpectLiteralRefused("http://167772161/", "10.0.0.1");
}

// Incident: "0177.0.0.1" is octal for 127.0.0.1 to inet_aton and to curl.
TEST_F(NetworkTest, OctalIpSpellingIsNormalisedAndRefused) {
  ExpectLiteralRefused("http://0177.0.0.1/", "127.0.0.1");
  ExpectLiteralRefused("http://017700000001/", "127.0.0.1");
  ExpectLiteralRefused("http://0251.0376.0251.0376/", "169.254.169.254");
}

// Incident: "0x7f.0.0.1" and "0x7f000001" are hex spellings of loopback.
TEST_F(NetworkTest, HexIpSpellingIsNormalisedAndRefused) {
  ExpectLiteralRefused("http://0x7f.0.0.1/", "127.0.0.1");
  ExpectLiteralRefused("http://0x7f000001/", "127.0.0.1");
  ExpectLiteralRefused("http://0xA9FEA9FE/", "169.254.169.254");
}

// Incident: short forms "127.1" and "10.1" are loopback and 10.0.0.1 to inet_aton.
TEST_F(NetworkTest, ShortIpFormsAreNormalisedAndRefused) {
  ExpectLiteralRefused("http://127.1/", "127.0.0.1");
  ExpectLiteralRefused("http://10.1/", "10.0.0.1");
  ExpectLiteralRefused("http://169.254.43518/", "169.254.169.254");
}

// Control for the spellings: a decimal spelling of an allowlisted public address normalises to it and
// is allowed, so the refusals above are about the ranges, not about refusing odd spellings.
TEST_F(NetworkTest, PublicAddressInDecimalSpellingNormalisesToCanonical) {
  FakeDns dns;
  EgressPolicy policy({kPublic}, dns.resolver());
  absl::StatusOr<sandbox::EgressDecision> d = policy.Check("http://1572395042/");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->host, kPublic);
  EXPECT_EQ(d->address, kPublic);
  EXPECT_EQ(d->port, 80);
}

// Incident: "[::ffff:127.0.0.1]" (IPv4-mapped IPv6) reached loopback past an IPv6 check that only
// knew "::1".
TEST_F(NetworkTest, Ipv4MappedIpv6IsUnwrappedAndRefused) {
  ExpectLiteralRefused("http://[::ffff:127.0.0.1]/", "127.0.0.1");
  ExpectLiteralRefused("http://[::ffff:7f00:1]/", "127.0.0.1");
  ExpectLiteralRefused("http://[::ffff:169.254.169.254]/", "169.254.169.254");
  ExpectNameRefused({"::ffff:10.0.0.1"});
  ExpectNameRefused({"::ffff:a9fe:a9fe"});
}

// Incident: a name with two A records, one public and one private: the checker looked at the first,
// the client connected to the second. Every address must pass.
TEST_F(NetworkTest, NameResolvingToPublicAndPrivateIsRefused) {
  ExpectNameRefused({kPublic, "127.0.0.1"});
  ExpectNameRefused({"10.0.0.7", kPublic});
  ExpectNameRefused({kPublic, "::1"});
  ExpectNameRefused({kPublic, "169.254.169.254"});
}

// Incident: DNS rebinding (seed 13.6.2): the first lookup said public, the connect-time lookup said
// 127.0.0.1. The check resolves once and returns the address to connect to.
TEST_F(NetworkTest, DnsRebindingCannotChangeTheCheckedAddress) {
  FakeDns dns;
  dns.Add("rebind.example", {kPublic}).Add("rebind.example", {"127.0.0.1"});
  EgressPolicy policy({"rebind.example"}, dns.resolver());
  absl::StatusOr<sandbox::EgressDecision> d = policy.Check("https://rebind.example/");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->address, kPublic);
  EXPECT_EQ(dns.lookups("rebind.example"), 1) << "a second lookup is a rebinding window";
}

// Incident: "http://example.com@127.0.0.1/" looked like example.com to a human and to a prefix check;
// the client connected to 127.0.0.1. Userinfo is refused outright.
TEST_F(NetworkTest, UserinfoUrlsAreRefused) {
  FakeDns dns;
  dns.Add("example.com", {kPublic});
  EgressPolicy policy({"example.com", "127.0.0.1"}, dns.resolver());
  for (const char* url : {"http://user:pass@example.com/", "http://user@example.com/",
                          "http://example.com@127.0.0.1/", "http://:@example.com/",
                          "https://example.com:443@127.0.0.1/", "http://@example.com/"}) {
    EXPECT_FALSE(policy.Check(url).ok()) << url;
    EXPECT_EQ(CodeName(policy.Check(url)), "EPERM") << url;
  }
}

// Incident: "http://example.com\@evil.net/" is example.com to WHATWG parsers (backslash = slash) and
// evil.net to RFC 3986 parsers. Either refuse it, or the host that was checked is example.com.
TEST_F(NetworkTest, BackslashAuthorityConfusionNeverReachesTheOtherHost) {
  FakeDns dns;
  dns.Add("example.com", {kPublic}).Add("evil.net", {kPublic});
  EgressPolicy policy({"example.com", "evil.net"}, dns.resolver());
  absl::StatusOr<sandbox::EgressDecision> d = policy.Check("http://example.com\\@evil.net/");
  if (d.ok()) {
    EXPECT_EQ(d->host, "example.com");
  } else {
    EXPECT_TRUE(CodeName(d) == "EPERM" || CodeName(d) == "EINVAL") << d.status();
  }
}

// Incident: file://, gopher:// and friends turned an HTTP fetcher into a file reader or a raw TCP
// client. Only http and https are allowed.
TEST_F(NetworkTest, NonHttpSchemesAreRefused) {
  FakeDns dns;
  dns.Add("example.com", {kPublic});
  EgressPolicy policy({"example.com"}, dns.resolver());
  for (const char* url :
       {"file:///etc/passwd", "file://example.com/etc/passwd", "ftp://example.com/",
        "gopher://example.com:70/_GET", "dict://example.com:11211/stat", "ws://example.com/",
        "ldap://example.com/", "jar:http://example.com/x.jar!/", "javascript:alert(1)",
        "data:text/plain,hi"}) {
    absl::StatusOr<sandbox::EgressDecision> d = policy.Check(url);
    EXPECT_FALSE(d.ok()) << url;
    EXPECT_TRUE(CodeName(d) == "EPERM" || CodeName(d) == "EINVAL") << url << ": " << d.status();
  }
}

// Incident: a URL without a scheme ("example.com/x", "//example.com/") was guessed into http and
// skipped the scheme check.
TEST_F(NetworkTest, UrlWithoutSchemeIsInvalid) {
  FakeDns dns;
  dns.Add("example.com", {kPublic});
  EgressPolicy policy({"example.com"}, dns.resolver());
  for (const char* url : {"example.com/x", "//example.com/", "", "http://", "http:///x",
                          "https:example.com"}) {
    EXPECT_FALSE(policy.Check(url).ok()) << "'" << url << "'";
  }
}

// Incident: "0.0.0.0" connects to the local host on Linux; unspecified, multicast and CGNAT addresses
// are refused like private ones.
TEST_F(NetworkTest, UnspecifiedMulticastAndCgnatAreRefused) {
  ExpectLiteralRefused("http://0.0.0.0/", "0.0.0.0");
  ExpectLiteralRefused("http://0/", "0.0.0.0");
  ExpectLiteralRefused("http://[::]/", "::");
  ExpectNameRefused({"224.0.0.1"});
  ExpectNameRefused({"ff02::1"});
  ExpectNameRefused({"100.64.0.1"});
  ExpectNameRefused({"100.127.255.254"});
  ExpectNameRefused({"fc00::1"});
  ExpectNameRefused({"fdff:ffff::1"});
}

// Incident: a lookup failure or an empty answer was treated as "no bad address found", i.e. allowed.
TEST_F(NetworkTest, ResolverFailureOrEmptyAnswerIsNotAllowed) {
  FakeDns dns;
  dns.Add("empty.example", {});
  dns.Add("garbage.example", {"not-an-address"});
  EgressPolicy policy({"empty.example", "garbage.example", "nxdomain.example"}, dns.resolver());
  EXPECT_FALSE(policy.Check("https://empty.example/").ok());
  EXPECT_FALSE(policy.Check("https://garbage.example/").ok());
  EXPECT_FALSE(policy.Check("https://nxdomain.example/").ok());
}

// Incident: a port outside 1..65535 wrapped around (65616 -> 80) in a 16-bit conversion.
TEST_F(NetworkTest, OutOfRangePortIsInvalid) {
  FakeDns dns;
  dns.Add("example.com", {kPublic});
  EgressPolicy policy({"example.com"}, dns.resolver());
  for (const char* url : {"http://example.com:65616/", "http://example.com:0/",
                          "http://example.com:-1/", "http://example.com:8o/"}) {
    EXPECT_EQ(CodeName(policy.Check(url)), "EINVAL") << url;
  }
  absl::StatusOr<sandbox::EgressDecision> d = policy.Check("http://example.com:8080/");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->port, 8080);
}

// Incident: percent-encoded host bytes ("%31%32%37.0.0.1") decoded after the check, and an IPv6 zone
// id ("%25eth0") smuggled an interface into a link-local address.
TEST_F(NetworkTest, PercentEncodedHostAndZoneIdAreRefused) {
  FakeDns dns;
  EgressPolicy policy({"127.0.0.1", "fe80::1"}, dns.resolver());
  for (const char* url : {"http://%31%32%37.0.0.1/", "http://[fe80::1%25eth0]/",
                          "http://127.0.0.1%00.example.com/"}) {
    absl::StatusOr<sandbox::EgressDecision> d = policy.Check(url);
    EXPECT_FALSE(d.ok()) << url;
  }
}

// Incident: an IPv6 literal that resolves to a public address must pass; the check is not an
// "IPv6 is scary, refuse it" shortcut (control for the IPv6 refusals).
TEST_F(NetworkTest, PublicIpv6IsAllowed) {
  FakeDns dns;
  dns.Add("v6.example", {"2606:2800:220:1:248:1893:25c8:1946"});
  EgressPolicy policy({"v6.example"}, dns.resolver());
  absl::StatusOr<sandbox::EgressDecision> d = policy.Check("https://v6.example/");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->address, "2606:2800:220:1:248:1893:25c8:1946");
}

}  // namespace
}  // namespace redteam

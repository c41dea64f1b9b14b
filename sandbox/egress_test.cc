#include "sandbox/egress.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace sandbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A resolver from a table, counting lookups so tests can prove a name was (not) resolved.
struct FakeDns {
  std::map<std::string, std::vector<std::string>> table;
  std::shared_ptr<std::vector<std::string>> lookups = std::make_shared<std::vector<std::string>>();

  Resolver AsResolver() const {
    return [table = table, lookups = lookups](
               absl::string_view host) -> absl::StatusOr<std::vector<std::string>> {
      lookups->emplace_back(host);
      auto it = table.find(std::string(host));
      if (it == table.end()) return MakeError(ErrorCode::kENOENT, "no such host");
      return it->second;
    };
  }
};

std::string Message(const absl::Status& s) { return std::string(s.message()); }

class EgressTest : public ::testing::Test {
 protected:
  EgressPolicy Policy(std::vector<std::string> allowed) {
    return EgressPolicy(std::move(allowed), dns_.AsResolver());
  }
  void ExpectDenied(const EgressPolicy& policy, const std::string& url, const std::string& reason) {
    auto d = policy.Check(url);
    ASSERT_FALSE(d.ok()) << url << " was allowed, to " << d->address;
    EXPECT_EQ(CodeOf(d.status()), ErrorCode::kEPERM) << url << ": " << d.status();
    EXPECT_THAT(Message(d.status()), HasSubstr(reason)) << url;
  }
  void ExpectInvalid(const EgressPolicy& policy, const std::string& url, const std::string& reason) {
    auto d = policy.Check(url);
    ASSERT_FALSE(d.ok()) << url;
    EXPECT_EQ(CodeOf(d.status()), ErrorCode::kEINVAL) << url << ": " << d.status();
    EXPECT_THAT(Message(d.status()), HasSubstr(reason)) << url;
  }
  FakeDns dns_;
};

TEST_F(EgressTest, EmptyAllowlistDeniesEverything) {
  dns_.table["example.com"] = {"93.184.216.34"};
  const EgressPolicy policy = Policy({});
  ExpectDenied(policy, "https://example.com/", "host not on the egress allowlist: 'example.com' "
                                               "(the allowlist is empty: all egress denied)");
  ExpectDenied(policy, "https://93.184.216.34/", "not on the egress allowlist");
  EXPECT_TRUE(dns_.lookups->empty()) << "a denied name must not be looked up";
}

TEST_F(EgressTest, AllowedHostReturnsTheCheckedAddress) {
  dns_.table["example.com"] = {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"};
  const EgressPolicy policy = Policy({"Example.COM."});
  auto d = policy.Check("HTTPS://EXAMPLE.com./index.html?q=1#top");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->scheme, "https");
  EXPECT_EQ(d->host, "example.com");
  EXPECT_EQ(d->port, 443);
  EXPECT_EQ(d->address, "93.184.216.34");
  EXPECT_EQ(*dns_.lookups, std::vector<std::string>{"example.com"}) << "exactly one lookup";
  auto http = policy.Check("http://example.com:8080");
  ASSERT_TRUE(http.ok()) << http.status();
  EXPECT_EQ(http->port, 8080);
  EXPECT_EQ(policy.Check("http://example.com")->port, 80);
  auto dotted = policy.Check("http://example.com.:8443/");
  ASSERT_TRUE(dotted.ok()) << dotted.status();
  EXPECT_EQ(dotted->host, "example.com");
  EXPECT_EQ(dotted->port, 8443);
}

TEST_F(EgressTest, AllowlistIsExactNoSubdomainsNoWildcards) {
  dns_.table["api.example.com"] = {"93.184.216.35"};
  dns_.table["example.com.evil.net"] = {"93.184.216.36"};
  const EgressPolicy policy = Policy({"example.com", "*.example.org"});
  ExpectDenied(policy, "https://api.example.com/", "not on the egress allowlist");
  ExpectDenied(policy, "https://example.com.evil.net/", "not on the egress allowlist");
  ExpectDenied(policy, "https://www.example.org/", "not on the egress allowlist");
  auto strict = EgressPolicy::Create({"example.com", "*.example.org"}, dns_.AsResolver());
  EXPECT_EQ(CodeOf(strict.status()), ErrorCode::kEINVAL);
  EXPECT_THAT(Message(strict.status()), HasSubstr("wildcards are not supported"));
  EXPECT_EQ(CodeOf(EgressPolicy::Create({"http://x.com/"}).status()), ErrorCode::kEINVAL);
  EXPECT_TRUE(EgressPolicy::Create({"example.com", "[::1]", "0x5db8d822"}).ok());
}

TEST_F(EgressTest, OnlyHttpAndHttps) {
  const EgressPolicy policy = Policy({"example.com"});
  for (const char* url : {"ftp://example.com/", "file://example.com/etc/passwd",
                          "gopher://example.com/", "javascript://example.com/"}) {
    ExpectDenied(policy, url, "scheme not allowed");
  }
  ExpectInvalid(policy, "example.com/path", "malformed URL");
  ExpectInvalid(policy, "://example.com", "malformed URL");
  ExpectInvalid(policy, "http:/example.com", "malformed URL");
}

TEST_F(EgressTest, UserinfoIsRefusedWithoutEchoingIt) {
  dns_.table["example.com"] = {"93.184.216.34"};
  const EgressPolicy policy = Policy({"example.com", "evil.com"});
  for (const char* url : {"https://user:hunter2@example.com/", "https://example.com@evil.com/",
                          "http://@example.com/", "http://example.com:80@evil.com/"}) {
    ExpectDenied(policy, url, "userinfo (user:password@) not allowed in URL");
    EXPECT_THAT(Message(policy.Check(url).status()), ::testing::Not(HasSubstr("hunter2")));
  }
  // An '@' after the authority is path, query or fragment, not userinfo.
  EXPECT_TRUE(policy.Check("https://example.com/a@b?c=@d#@e").ok());
}

TEST_F(EgressTest, PortParsing) {
  dns_.table["example.com"] = {"93.184.216.34"};
  const EgressPolicy policy = Policy({"example.com", "[2606:2800::1]"});
  EXPECT_EQ(policy.Check("http://example.com:1/")->port, 1);
  EXPECT_EQ(policy.Check("http://example.com:65535/")->port, 65535);
  EXPECT_EQ(policy.Check("http://example.com:0080/")->port, 80);
  ExpectInvalid(policy, "http://example.com:0/", "port out of range");
  ExpectInvalid(policy, "http://example.com:65536/", "port out of range");
  ExpectInvalid(policy, "http://example.com:99999999999999999999/", "port out of range");
  ExpectInvalid(policy, "http://example.com:/", "empty port");
  ExpectInvalid(policy, "http://example.com:-1/", "port is not a number");
  ExpectInvalid(policy, "http://example.com:80:80/", "port is not a number");
  ExpectInvalid(policy, "http://example.com:8o/", "port is not a number");
  auto v6 = policy.Check("https://[2606:2800::1]:8443/x");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "2606:2800::1");
  EXPECT_EQ(v6->port, 8443);
  EXPECT_EQ(v6->address, "2606:2800::1");
  ExpectInvalid(policy, "https://[2606:2800::1/", "unclosed '['");
  ExpectInvalid(policy, "https://[2606:2800::1]x/", "unexpected text after ']'");
  ExpectInvalid(policy, "https://[127.0.0.1]/", "malformed IPv6 address");
}

TEST_F(EgressTest, AmbiguousUrlsAreInvalid) {
  const EgressPolicy policy = Policy({"example.com"});
  ExpectInvalid(policy, "http://example.com\\@evil.com/", "backslash not allowed");
  ExpectInvalid(policy, "http://exa mple.com/", "whitespace, control or non-ASCII");
  ExpectInvalid(policy, "http://example.com\t/", "whitespace, control or non-ASCII");
  ExpectInvalid(policy, "http://ex\xc3\xa4mple.com/", "whitespace, control or non-ASCII");
  ExpectInvalid(policy, "http://%31%32%37.0.0.1/", "percent-encoding");
  ExpectInvalid(policy, "http://[fe80::1%25eth0]/", "zone ids");
  ExpectInvalid(policy, "http:///path", "URL has no host");
  ExpectInvalid(policy, "http://:80/", "URL has no host");
  ExpectInvalid(policy, "http://exa!mple.com/", "malformed host name");
  ExpectInvalid(policy, "http://example..com/", "malformed host name");
  ExpectInvalid(policy, "http://" + std::string(64, 'a') + ".com/", "malformed host name");
}

// RFC 1035: a name is at most 253 bytes as text (255 on the wire), a label at most 63. Both sides of
// both edges; a trailing dot is not counted.
TEST_F(EgressTest, HostNameLengthEdges) {
  const std::string label63(63, 'a');
  const std::string name253 = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
  const std::string name254 = label63 + "." + label63 + "." + label63 + "." + std::string(62, 'b');
  ASSERT_EQ(name253.size(), 253u);
  ASSERT_EQ(name254.size(), 254u);
  for (const std::string& name : {name253, label63 + ".com"}) {
    dns_.table[name] = {"93.184.216.34"};
    EXPECT_TRUE(EgressPolicy::Create({name}).ok()) << name.size();
    EXPECT_TRUE(EgressPolicy::Create({name + "."}).ok()) << name.size();
    auto d = Policy({name}).Check("https://" + name + "./");
    ASSERT_TRUE(d.ok()) << name.size() << ": " << d.status();
    EXPECT_EQ(d->host, name);
  }
  for (const std::string& name : {name254, std::string(64, 'a') + ".com"}) {
    EXPECT_EQ(CodeOf(EgressPolicy::Create({name}).status()), ErrorCode::kEINVAL) << name.size();
    ExpectInvalid(Policy({name253}), "https://" + name + "/", "malformed host name");
  }
  EXPECT_EQ(dns_.lookups->size(), 2u) << "only the two valid names were looked up";
}

// Every spelling of a blocked IPv4 address, each refused with the range it falls in.
TEST_F(EgressTest, IpLiteralsInEverySpellingAreNormalisedAndRefused) {
  // Allowlisted on purpose: a blocked address stays blocked even when allowed.
  const EgressPolicy policy =
      Policy({"127.0.0.1", "10.0.0.1", "169.254.169.254", "::1", "::ffff:127.0.0.1"});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"127.0.0.1", "127.0.0.1 is loopback (127.0.0.0/8)"},
      {"2130706433", "127.0.0.1 is loopback"},
      {"0177.0.0.1", "127.0.0.1 is loopback"},
      {"0x7f.0.0.1", "127.0.0.1 is loopback"},
      {"0X7F.0.0.1", "127.0.0.1 is loopback"},
      {"0x7f000001", "127.0.0.1 is loopback"},
      {"017700000001", "127.0.0.1 is loopback"},
      {"127.1", "127.0.0.1 is loopback"},
      {"127.0.1", "127.0.0.1 is loopback"},
      {"127.000.000.001", "127.0.0.1 is loopback"},
      {"127.0.0.1.", "127.0.0.1 is loopback"},
      {"127.255.255.254", "loopback"},
      {"10.1.1", "10.1.0.1 is private (10.0.0.0/8)"},
      {"10.0.0.1", "private"},
      {"172.16.0.1", "private (172.16.0.0/12)"},
      {"172.31.255.255", "private"},
      {"192.168.1.1", "private (192.168.0.0/16)"},
      {"169.254.169.254", "169.254.169.254 is link-local"},
      {"0xa9fea9fe", "169.254.169.254 is link-local"},
      {"2852039166", "169.254.169.254 is link-local"},
      {"0.0.0.0", "unspecified"},
      {"0", "0.0.0.0 is unspecified"},
      {"100.64.0.1", "CGNAT"},
      {"100.127.255.255", "CGNAT"},
      {"224.0.0.1", "multicast"},
      {"239.255.255.250", "multicast"},
      {"255.255.255.255", "broadcast"},
      {"240.0.0.1", "reserved"},
      {"192.0.0.192", "IETF protocol assignments"},
      {"198.18.0.1", "benchmarking"},
      {"192.0.2.1", "documentation"},
      {"[::1]", "::1 is loopback"},
      {"[0:0:0:0:0:0:0:1]", "::1 is loopback"},
      {"[::]", ":: is unspecified"},
      {"[::ffff:127.0.0.1]", "127.0.0.1 is loopback"},
      {"[::ffff:7f00:1]", "127.0.0.1 is loopback"},
      {"[::FFFF:A9FE:A9FE]", "169.254.169.254 is link-local"},
      {"[::127.0.0.1]", "IPv4-compatible"},
      {"[64:ff9b::7f00:1]", "NAT64 127.0.0.1, which is loopback"},
      {"[64:ff9b::a9fe:a9fe]", "NAT64 169.254.169.254, which is link-local"},
      {"[2002:7f00:1::]", "6to4 127.0.0.1, which is loopback"},
      {"[2002:c0a8:101::1]", "6to4 192.168.1.1, which is private"},
      {"[64:ff9b:1::1]", "local-use NAT64"},
      {"[fe80::1]", "link-local (fe80::/10)"},
      {"[febf::1]", "link-local"},
      {"[fc00::1]", "unique local (ULA)"},
      {"[fd12:3456::1]", "unique local"},
      {"[ff02::1]", "multicast"},
      {"[fec0::1]", "site-local"},
      {"[2001:db8::1]", "documentation"},
      {"[2001:0:4136:e378::1]", "Teredo"},
      {"[100::1]", "discard-only"},
  };
  for (const auto& [host, reason] : cases) {
    ExpectDenied(policy, "http://" + host + "/", "address blocked: ");
    ExpectDenied(policy, "http://" + host + ":8080/x", reason);
  }
  EXPECT_TRUE(dns_.lookups->empty()) << "IP literals are never resolved";
}

// Every blocked range at its first and last address, and the address just outside each edge. The
// expected reason names the range as written in the table ("(10.0.0.0/8)"), so a prefix length off by
// one fails either at an edge or in the text. "" means the address may be reached. Neighbouring
// ranges meet at some edges (fe80::/10 then fec0::/10): there the outside address has the other
// range's reason.
struct RangeCase {
  const char* address;
  const char* reason;  // Expected "<address as shown> is <reason>", or "" for allowed.
};

constexpr RangeCase kRangeEdges[] = {
    // 0.0.0.0/8
    {"0.0.0.0", "0.0.0.0 is unspecified (\"this network\") (0.0.0.0/8)"},
    {"0.255.255.255", "0.255.255.255 is unspecified (\"this network\") (0.0.0.0/8)"},
    {"1.0.0.0", ""},
    // 10.0.0.0/8
    {"9.255.255.255", ""},
    {"10.0.0.0", "10.0.0.0 is private (10.0.0.0/8)"},
    {"10.255.255.255", "10.255.255.255 is private (10.0.0.0/8)"},
    {"11.0.0.0", ""},
    // 100.64.0.0/10
    {"100.63.255.255", ""},
    {"100.64.0.0", "100.64.0.0 is CGNAT shared address space (100.64.0.0/10)"},
    {"100.127.255.255", "100.127.255.255 is CGNAT shared address space (100.64.0.0/10)"},
    {"100.128.0.0", ""},
    // 127.0.0.0/8
    {"126.255.255.255", ""},
    {"127.0.0.0", "127.0.0.0 is loopback (127.0.0.0/8)"},
    {"127.255.255.255", "127.255.255.255 is loopback (127.0.0.0/8)"},
    {"128.0.0.0", ""},
    // 169.254.0.0/16
    {"169.253.255.255", ""},
    {"169.254.0.0", "169.254.0.0 is link-local"},
    {"169.254.255.255", "169.254.255.255 is link-local (cloud metadata lives at 169.254.169.254) "
                        "(169.254.0.0/16)"},
    {"169.255.0.0", ""},
    // 172.16.0.0/12
    {"172.15.255.255", ""},
    {"172.16.0.0", "172.16.0.0 is private (172.16.0.0/12)"},
    {"172.31.255.255", "172.31.255.255 is private (172.16.0.0/12)"},
    {"172.32.0.0", ""},
    // 192.0.0.0/24
    {"191.255.255.255", ""},
    {"192.0.0.0", "192.0.0.0 is IETF protocol assignments (192.0.0.0/24)"},
    {"192.0.0.255", "192.0.0.255 is IETF protocol assignments (192.0.0.0/24)"},
    {"192.0.1.0", ""},
    // 192.0.2.0/24
    {"192.0.1.255", ""},
    {"192.0.2.0", "192.0.2.0 is documentation (192.0.2.0/24)"},
    {"192.0.2.255", "192.0.2.255 is documentation (192.0.2.0/24)"},
    {"192.0.3.0", ""},
    // 192.168.0.0/16
    {"192.167.255.255", ""},
    {"192.168.0.0", "192.168.0.0 is private (192.168.0.0/16)"},
    {"192.168.255.255", "192.168.255.255 is private (192.168.0.0/16)"},
    {"192.169.0.0", ""},
    // 198.18.0.0/15
    {"198.17.255.255", ""},
    {"198.18.0.0", "198.18.0.0 is benchmarking (198.18.0.0/15)"},
    {"198.19.255.255", "198.19.255.255 is benchmarking (198.18.0.0/15)"},
    {"198.20.0.0", ""},
    // 198.51.100.0/24
    {"198.51.99.255", ""},
    {"198.51.100.0", "198.51.100.0 is documentation (198.51.100.0/24)"},
    {"198.51.100.255", "198.51.100.255 is documentation (198.51.100.0/24)"},
    {"198.51.101.0", ""},
    // 203.0.113.0/24
    {"203.0.112.255", ""},
    {"203.0.113.0", "203.0.113.0 is documentation (203.0.113.0/24)"},
    {"203.0.113.255", "203.0.113.255 is documentation (203.0.113.0/24)"},
    {"203.0.114.0", ""},
    // 224.0.0.0/4, then 240.0.0.0/4 up to the end, with 255.255.255.255/32 inside it.
    {"223.255.255.255", ""},
    {"224.0.0.0", "224.0.0.0 is multicast (224.0.0.0/4)"},
    {"239.255.255.255", "239.255.255.255 is multicast (224.0.0.0/4)"},
    {"240.0.0.0", "240.0.0.0 is reserved (240.0.0.0/4)"},
    {"255.255.255.254", "255.255.255.254 is reserved (240.0.0.0/4)"},
    {"255.255.255.255", "255.255.255.255 is broadcast (255.255.255.255/32)"},
    // ::/128, ::1/128 and ::/96 (IPv4-compatible)
    {"::", ":: is unspecified (::/128)"},
    {"::1", "::1 is loopback (::1/128)"},
    {"::2", "::2 is IPv4-compatible (deprecated) (::/96)"},
    {"::ffff:ffff", "::255.255.255.255 is IPv4-compatible (deprecated) (::/96)"},
    {"::1:0:0", ""},
    // ::ffff:0:0/96 (IPv4-mapped) is the IPv4 address itself; one bit either side is not mapped.
    {"::ffff:192.168.0.1", "192.168.0.1 is private (192.168.0.0/16)"},
    {"::ffff:10.0.0.1", "10.0.0.1 is private (10.0.0.0/8)"},
    {"::fffe:a00:1", ""},
    {"::1:ffff:a00:1", ""},
    // 64:ff9b::/96 (NAT64): judged by the IPv4 address in its last 32 bits.
    {"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", ""},
    {"64:ff9b::", "64:ff9b:: is NAT64 0.0.0.0, which is unspecified"},
    {"64:ff9b::ffff:ffff", "is NAT64 255.255.255.255, which is broadcast (255.255.255.255/32)"},
    {"64:ff9b::808:808", ""},
    {"64:ff9b::1:a00:1", ""},
    // 64:ff9b:1::/48 (local-use NAT64)
    {"64:ff9b:0:ffff:ffff:ffff:ffff:ffff", ""},
    {"64:ff9b:1::", "64:ff9b:1:: is local-use NAT64 (64:ff9b:1::/48)"},
    {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
     "64:ff9b:1:ffff:ffff:ffff:ffff:ffff is local-use NAT64 (64:ff9b:1::/48)"},
    {"64:ff9b:2::", ""},
    // 100::/64 (discard-only)
    {"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""},
    {"100::", "100:: is discard-only (100::/64)"},
    {"100::ffff:ffff:ffff:ffff", "100::ffff:ffff:ffff:ffff is discard-only (100::/64)"},
    {"100:0:0:1::", ""},
    // 2001::/32 (Teredo)
    {"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""},
    {"2001::", "2001:: is Teredo tunnel (2001::/32)"},
    {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff is Teredo tunnel"},
    {"2001:1::", ""},
    // 2001:db8::/32 (documentation)
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ""},
    {"2001:db8::", "2001:db8:: is documentation (2001:db8::/32)"},
    {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
     "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff is documentation (2001:db8::/32)"},
    {"2001:db9::", ""},
    // 2002::/16 (6to4): judged by the IPv4 address in bits 16..47.
    {"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""},
    {"2002::", "2002:: is 6to4 0.0.0.0, which is unspecified"},
    {"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "is 6to4 255.255.255.255, which is broadcast"},
    {"2002:808:808::", ""},
    {"2003:a00:1::", ""},
    // fc00::/7 (ULA)
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""},
    {"fc00::", "fc00:: is unique local (ULA) (fc00::/7)"},
    {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff is unique local"},
    {"fe00::", ""},
    // fe80::/10, fec0::/10, ff00::/8: adjacent up to the end of the address space.
    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""},
    {"fe80::", "fe80:: is link-local (fe80::/10)"},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff is link-local (fe80::/10)"},
    {"fec0::", "fec0:: is site-local (deprecated) (fec0::/10)"},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff is site-local (deprecated) (fec0::/10)"},
    {"ff00::", "ff00:: is multicast (ff00::/8)"},
    {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff is multicast (ff00::/8)"},
};

// Through the resolver (the DNS-rebinding path) and as a URL literal: both must agree.
TEST_F(EgressTest, EveryBlockedRangeAtItsEdges) {
  for (const RangeCase& c : kRangeEdges) {
    const std::string address = c.address;
    dns_.table["edge.example"] = {address};
    const std::string literal = absl::StrContains(address, ':') ? "[" + address + "]" : address;
    const EgressPolicy policy = Policy({"edge.example", literal});
    auto resolved = policy.Check("http://edge.example/");
    auto direct = policy.Check("http://" + literal + "/");
    if (std::string(c.reason).empty()) {
      EXPECT_TRUE(resolved.ok()) << address << ": " << resolved.status();
      EXPECT_TRUE(direct.ok()) << address << ": " << direct.status();
      continue;
    }
    ExpectDenied(policy, "http://edge.example/", "resolves to a blocked address: ");
    ExpectDenied(policy, "http://edge.example/", c.reason);
    ExpectDenied(policy, "http://" + literal + "/", "address blocked: ");
    ExpectDenied(policy, "http://" + literal + "/", c.reason);
  }
}

TEST_F(EgressTest, MalformedNumericHostsAreInvalidNotNames) {
  const EgressPolicy policy = Policy({"example.com"});
  for (const char* host : {"256.0.0.1", "1.2.3.256", "1.2.3.4.5", "08.0.0.1", "0x1g.0.0.1",
                           "1.2.65536", "4294967296", "0x100000000", "1..2.3", "example.0x10"}) {
    ExpectInvalid(policy, std::string("http://") + host + "/", "malformed IPv4 address");
  }
  EXPECT_TRUE(dns_.lookups->empty());
}

TEST_F(EgressTest, PublicLiteralIsAllowedOnlyIfOnTheAllowlistInCanonicalForm) {
  const EgressPolicy policy = Policy({"0x5db8d822", "2606:2800:0220:0001::1", "8.8.8.8"});
  for (const char* url : {"http://93.184.216.34/", "http://1572395042/", "http://0x5d.0xb8.0xd8.0x22/",
                          "http://93.184.55330/", "http://[::ffff:93.184.216.34]/"}) {
    auto d = policy.Check(url);
    ASSERT_TRUE(d.ok()) << url << ": " << d.status();
    EXPECT_EQ(d->host, "93.184.216.34") << url;
    EXPECT_EQ(d->address, "93.184.216.34") << url;
  }
  auto v6 = policy.Check("http://[2606:2800:220:1:0:0:0:1]/");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->address, "2606:2800:220:1::1");
  ExpectDenied(policy, "http://1.1.1.1/", "host not on the egress allowlist: '1.1.1.1'");
  // A NAT64 or 6to4 address with a public IPv4 inside is public, but still must be allowlisted.
  ExpectDenied(policy, "http://[64:ff9b::808:808]/", "not on the egress allowlist");
  EXPECT_TRUE(dns_.lookups->empty());
}

// The edges of the IPv4 literal grammar (WHATWG, inet_aton): a bare "0x" part is zero, a part may
// be exactly 2^32 - 1, five parts are too many, and a last label that only starts like hex is a
// name, looked up as one.
TEST_F(EgressTest, Ipv4LiteralGrammarEdges) {
  dns_.table["a.0xg"] = {"93.184.216.34"};
  const EgressPolicy policy = Policy({"93.184.216.0", "a.0xg"});
  auto zero = policy.Check("http://0x5d.0xb8.0xd8.0x/");
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->address, "93.184.216.0");
  ExpectDenied(policy, "http://4294967295/", "255.255.255.255 is broadcast");
  ExpectDenied(policy, "http://0xffffffff/", "255.255.255.255 is broadcast");
  ExpectInvalid(policy, "http://4294967296/", "malformed IPv4 address");
  ExpectInvalid(policy, "http://1.2.3.4.0/", "malformed IPv4 address");
  ExpectInvalid(policy, "http://0.0.0.0.0/", "malformed IPv4 address");
  auto name = policy.Check("http://a.0xg/");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->address, "93.184.216.34");
}

TEST_F(EgressTest, SpaceAnywhereInTheUrlIsRefused) {
  dns_.table["example.com"] = {"93.184.216.34"};
  const EgressPolicy policy = Policy({"example.com"});
  ExpectInvalid(policy, "http://example.com/a b", "whitespace");
  ExpectInvalid(policy, "http://example.com/a\x7f", "whitespace");
  auto ok = policy.Check("http://example.com/a~!");
  EXPECT_TRUE(ok.ok()) << ok.status();
}

TEST_F(EgressTest, AllowEntryWithOneBracketIsInvalid) {
  for (const char* entry : {"[::1", "::1]", "[example.com"}) {
    EXPECT_EQ(CodeOf(EgressPolicy::Create({entry}, dns_.AsResolver()).status()),
              ErrorCode::kEINVAL)
        << entry;
  }
  EXPECT_TRUE(EgressPolicy::Create({"[2606:2800::1]"}, dns_.AsResolver()).ok());
}

TEST_F(EgressTest, EveryResolvedAddressIsCheckedDnsRebindingShape) {
  dns_.table["rebind.example"] = {"93.184.216.34", "127.0.0.1"};
  dns_.table["rebind6.example"] = {"2606:2800::1", "::ffff:10.0.0.1"};
  dns_.table["meta.example"] = {"169.254.169.254"};
  dns_.table["ula.example"] = {"fd00::1"};
  dns_.table["good.example"] = {"2606:2800::1", "93.184.216.34"};
  const EgressPolicy policy =
      Policy({"rebind.example", "rebind6.example", "meta.example", "ula.example", "good.example",
              "localhost", "gone.example", "empty.example", "junk.example"});
  ExpectDenied(policy, "https://rebind.example/",
               "host 'rebind.example' resolves to a blocked address: 127.0.0.1 is loopback");
  ExpectDenied(policy, "https://rebind6.example/", "10.0.0.1 is private");
  ExpectDenied(policy, "https://meta.example/latest/meta-data/", "169.254.169.254 is link-local");
  ExpectDenied(policy, "https://ula.example/", "fd00::1 is unique local");
  dns_.table["localhost"] = {"::1", "127.0.0.1"};
  ExpectDenied(Policy({"localhost"}), "http://localhost:6379/", "::1 is loopback");
  auto good = policy.Check("https://good.example/");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->address, "2606:2800::1") << "the first checked address, as resolved";
}

TEST_F(EgressTest, ResolverFailuresKeepTheirCodeAndFailClosed) {
  dns_.table["empty.example"] = {};
  dns_.table["junk.example"] = {"93.184.216.34", "not-an-address"};
  dns_.table["sloppy.example"] = {"0x7f.1"};  // Resolvers return inet_ntop text, nothing else.
  const EgressPolicy policy =
      Policy({"gone.example", "empty.example", "junk.example", "sloppy.example"});
  auto gone = policy.Check("https://gone.example/");
  EXPECT_EQ(CodeOf(gone.status()), ErrorCode::kENOENT);
  EXPECT_THAT(Message(gone.status()), HasSubstr("resolving 'gone.example'"));
  EXPECT_EQ(CodeOf(policy.Check("https://empty.example/").status()), ErrorCode::kENOENT);
  ExpectDenied(policy, "https://junk.example/", "unparsable address");
  ExpectDenied(policy, "https://sloppy.example/", "unparsable address");
  const EgressPolicy transient(
      {"flaky.example"}, [](absl::string_view) -> absl::StatusOr<std::vector<std::string>> {
        return MakeError(ErrorCode::kETRANSIENT, "try again");
      });
  auto flaky = transient.Check("https://flaky.example/");
  EXPECT_EQ(CodeOf(flaky.status()), ErrorCode::kETRANSIENT);
  EXPECT_TRUE(Info(CodeOf(flaky.status())).retryable);
}

TEST(SystemResolverTest, NumericAddressesComeBackAsWrittenOncePerAddress) {
  // getaddrinfo answers numeric hosts itself, so this runs anywhere (the localhost test below may
  // skip): the family branches, the conversion back to text and the de-duplication must hold.
  for (const char* literal : {"127.0.0.1", "::1", "203.0.113.7", "2001:db8::5"}) {
    auto addresses = SystemResolver()(literal);
    ASSERT_TRUE(addresses.ok()) << literal << ": " << addresses.status();
    EXPECT_THAT(*addresses, ElementsAre(literal));
  }
}

TEST(SystemResolverTest, ResolvesLocalhostToLoopbackWhichIsThenRefused) {
  // /etc/hosts answers without a network; a machine without a localhost entry skips.
  auto addresses = SystemResolver()("localhost");
  if (!addresses.ok() || addresses->empty()) {
    GTEST_SKIP() << "localhost does not resolve here: " << addresses.status();
  }
  const EgressPolicy policy({"localhost"});
  auto d = policy.Check("http://localhost/");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(CodeOf(d.status()), ErrorCode::kEPERM);
  EXPECT_THAT(Message(d.status()), HasSubstr("is loopback"));
}

}  // namespace
}  // namespace sandbox

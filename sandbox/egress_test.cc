#include "sandbox/egress.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sandbox/errors.h"

namespace sandbox {
namespace {

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

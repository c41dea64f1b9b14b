// isolation.h on every build: layer names parse, the doctor lists every layer, a required layer that
// is unavailable fails closed with EUNSUPPORTED, and an enabled one that is unavailable is named in
// the result while the run proceeds. Under --config=portable every layer is unavailable, so these
// exercise the fail-closed path for real; on Linux they use whatever this machine lacks.
#include "sandbox/isolation.h"

#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sandbox/errors.h"

namespace sandbox {
namespace {

TEST(LayerNamesTest, RoundTripAndErrors) {
  for (Layer layer : AllLayers()) {
    absl::StatusOr<Layer> parsed = ParseLayer(LayerName(layer));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, layer);
  }
  absl::StatusOr<Layer> bad = ParseLayer("selinux");
  EXPECT_EQ(CodeOf(bad.status()), ErrorCode::kEINVAL);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "landlock")) << "the error lists the known layers";
  absl::StatusOr<std::set<Layer>> list = ParseLayerList("landlock, seccomp");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::set<Layer>{Layer::kLandlock, Layer::kSeccomp}));
  EXPECT_EQ(ParseLayerList("all")->size(), AllLayers().size());
  EXPECT_TRUE(ParseLayerList("")->empty());
  EXPECT_FALSE(ParseLayerList("landlock,nope").ok());
}

TEST(IsolationFlagsTest, BuildsOptionsAndRejectsContradictions) {
  IsolationFlagValues f;
  f.isolate = "all";
  f.no_isolate = "netns";
  f.require = "seccomp";
  f.seccomp = "strict";
  f.pids = 64;
  absl::StatusOr<IsolationOptions> o = IsolationFromFlags(f, "/ws");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->enabled.count(Layer::kNetNs), 0u);
  EXPECT_EQ(o->enabled.count(Layer::kLandlock), 1u);
  EXPECT_EQ(o->required, (std::set<Layer>{Layer::kSeccomp}));
  EXPECT_EQ(o->seccomp_profile, SeccompProfileKind::kStrict);
  EXPECT_EQ(o->pids, 64u);
  EXPECT_EQ(o->workspace, "/ws");
  EXPECT_TRUE(WantsIsolation(*o));
  EXPECT_FALSE(WantsIsolation(*IsolationFromFlags({}, "/ws")));

  f.no_isolate = "seccomp";
  EXPECT_EQ(CodeOf(IsolationFromFlags(f, "/ws").status()), ErrorCode::kEINVAL);
  IsolationFlagValues bad_profile;
  bad_profile.seccomp = "lenient";
  EXPECT_EQ(CodeOf(IsolationFromFlags(bad_profile, "/ws").status()), ErrorCode::kEINVAL);
  IsolationFlagValues bad_layer;
  bad_layer.require = "apparmor";
  absl::StatusOr<IsolationOptions> e = IsolationFromFlags(bad_layer, "/ws");
  EXPECT_TRUE(absl::StrContains(e.status().message(), "--require")) << e.status();
}

TEST(IsolationFlagsTest, CgroupLimitsFromFlagsOverrideTheDefaultsOnlyWhenGiven) {
  IsolationFlagValues f;
  f.isolate = "cgroup";
  absl::StatusOr<IsolationOptions> defaults = IsolationFromFlags(f, "/ws");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->memory_bytes, IsolationOptions().memory_bytes);
  EXPECT_EQ(defaults->pids, IsolationOptions().pids);
  EXPECT_EQ(defaults->cpu_millis, std::nullopt);
  f.memory_bytes = 1 << 20;
  f.cpu_millis = 250;
  absl::StatusOr<IsolationOptions> set = IsolationFromFlags(f, "/ws");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->memory_bytes, uint64_t{1} << 20);
  EXPECT_EQ(set->cpu_millis, 250u);
  // Only required layers still asks for isolation.
  IsolationFlagValues required_only;
  required_only.require = "seccomp";
  EXPECT_TRUE(WantsIsolation(*IsolationFromFlags(required_only, "/ws")));
}

TEST(DoctorTest, TextIsOneAlignedLinePerLayerThenTheFacts) {
  DoctorReport report;
  report.platform = "Linux 6.1 x86_64";
  report.layers = {{Layer::kUserNs, true, "works"}, {Layer::kLandlock, false, "no ABI"}};
  report.facts = {{"cgroup_mode", "v1"}};
  EXPECT_EQ(DoctorText(report),
            "platform: Linux 6.1 x86_64\n"
            "  userns    available    works\n"
            "  landlock  unavailable  no ABI\n"
            "cgroup_mode: v1\n");
}

TEST(DoctorTest, ListsEveryLayerAsTextAndJson) {
  DoctorReport report = Doctor();
  EXPECT_EQ(report.layers.size(), AllLayers().size());
  nlohmann::json j = nlohmann::json::parse(DoctorJson(report));
  ASSERT_EQ(j["layers"].size(), AllLayers().size());
  for (const auto& layer : j["layers"]) {
    EXPECT_TRUE(layer["available"].is_boolean());
    EXPECT_FALSE(layer["detail"].get<std::string>().empty());
  }
  std::string text = DoctorText(report);
  for (Layer layer : AllLayers()) EXPECT_TRUE(absl::StrContains(text, LayerName(layer))) << text;
}

RunRequest TrueRequest() {
  RunRequest r;
  r.argv = {"/bin/sh", "-c", "exit 0"};
  const char* tmp = getenv("TEST_TMPDIR");
  r.cwd = tmp != nullptr ? tmp : "/tmp";
  return r;
}

std::optional<LayerStatus> FirstUnavailable() {
  for (const LayerStatus& s : ProbeLayers()) {
    if (!s.available) return s;
  }
  return std::nullopt;
}

TEST(IsolationContractTest, RequiredUnavailableLayerFailsClosed) {
  std::optional<LayerStatus> missing = FirstUnavailable();
  if (!missing) GTEST_SKIP() << "every layer is available on this machine and build";
  IsolationOptions o;
  o.required = {missing->layer};
  absl::StatusOr<RunResult> res = RunIsolated(TrueRequest(), o);
  EXPECT_EQ(CodeOf(res.status()), ErrorCode::kEUNSUPPORTED) << res.status();
  EXPECT_TRUE(absl::StrContains(res.status().message(), LayerName(missing->layer)));
}

TEST(IsolationContractTest, EnabledUnavailableLayerIsNamedAndTheRunProceeds) {
  std::optional<LayerStatus> missing = FirstUnavailable();
  if (!missing) GTEST_SKIP() << "every layer is available on this machine and build";
  IsolationOptions o;
  o.enabled = {missing->layer};
  absl::StatusOr<RunResult> res = RunIsolated(TrueRequest(), o);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->exit_code, 0);
  ASSERT_FALSE(res->layers_unavailable.empty());
  EXPECT_TRUE(absl::StartsWith(res->layers_unavailable[0], LayerName(missing->layer)));
}

}  // namespace
}  // namespace sandbox

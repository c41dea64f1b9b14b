// Runs the built `sandbox` binary end to end (through the runner itself) and checks what a user sees:
// exit statuses like timeout(1), one-line errors, and the --json result.
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sandbox/cli/flags.h"
#include "sandbox/isolation.h"
#include "sandbox/runner.h"
#include "sandbox/runner_test_util.h"

namespace sandbox::cli {
namespace {

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

std::string CliPath() {
  char cwd[PATH_MAX];
  EXPECT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  return absl::StrCat(cwd, "/sandbox/cli/sandbox");
}

std::string TempDir() {
  std::string templ = absl::StrCat(getenv("TEST_TMPDIR"), "/cli.XXXXXX");
  EXPECT_NE(mkdtemp(templ.data()), nullptr);
  char real[PATH_MAX];
  EXPECT_NE(realpath(templ.c_str(), real), nullptr);
  return real;
}

CliRun RunCli(std::vector<std::string> args, const std::string& cwd = TempDir(),
              std::optional<std::string> stdin_data = std::nullopt) {
  RunRequest request;
  request.argv = {CliPath()};
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.cwd = cwd;
  // The runner's clean default environment, plus the two variables through which the mutation
  // runner's schemata engine picks the live mutant and records coverage (mutation/schema.cc): a
  // clean environment drops them, and then no mutant of the CLI's main.cc would ever run.
  request.env = DefaultEnvironment(cwd);
  for (const char* name : {"MUTATION_ACTIVE", "MUTATION_COVERAGE"}) {
    if (const char* value = getenv(name); value != nullptr) (*request.env)[name] = value;
  }
  request.stdin_data = std::move(stdin_data);
  request.wall_timeout = absl::Seconds(30);
  request.limits.cpu_seconds = 30;
  request.stdout_cap = 8 << 20;
  absl::StatusOr<RunResult> result = sandbox::Run(request);
  EXPECT_TRUE(result.ok()) << result.status();
  CliRun run;
  if (!result.ok()) return run;
  EXPECT_FALSE(result->term_signal.has_value()) << "the CLI itself died of a signal";
  run.status = result->exit_code.value_or(-1);
  run.out = result->out.data;
  run.err = result->err.data;
  return run;
}

nlohmann::json ParseJson(const std::string& text) {
  EXPECT_TRUE(absl::EndsWith(text, "\n"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one JSON object, one line";
  return nlohmann::json::parse(text);
}

TEST(CliTest, PassesOutputAndStatusThrough) {
  CliRun run = RunCli({"--", "/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(run.status, 3);
  EXPECT_EQ(run.out, "out\n");
  EXPECT_EQ(run.err, "err\n");
}

TEST(CliTest, JsonResult) {
  CliRun run = RunCli({"--json", "--memory=256M", "--", "/bin/echo", "hi"});
  EXPECT_EQ(run.status, 0);
  const nlohmann::json json = ParseJson(run.out);
  EXPECT_EQ(json["exit_code"], 0);
  EXPECT_EQ(json["timed_out"], false);
  EXPECT_EQ(json["stdout"]["data"], "hi\n");
  EXPECT_EQ(json["stdout"]["truncated"], false);
  EXPECT_GT(json["pid"].get<int>(), 0);
  EXPECT_EQ(json["pgid"], json["pid"]);
  const auto& limits = json["limits_in_force"];
  EXPECT_NE(std::find(limits.begin(), limits.end(), "RLIMIT_AS=268435456:268435456"), limits.end())
      << limits.dump();
  EXPECT_NE(std::find(limits.begin(), limits.end(), "RLIMIT_CORE=0:0"), limits.end());
}

TEST(CliTest, DoctorListsEveryLayer) {
  CliRun text = RunCli({"doctor"});
  EXPECT_EQ(text.status, 0);
  for (Layer layer : AllLayers()) EXPECT_TRUE(absl::StrContains(text.out, LayerName(layer))) << text.out;
  CliRun json = RunCli({"doctor", "--json"});
  EXPECT_EQ(json.status, 0);
  EXPECT_EQ(ParseJson(json.out)["layers"].size(), AllLayers().size());
  EXPECT_EQ(RunCli({"doctor", "--bogus"}).status, kExitSandboxError);
}

// What this test sees is what the CLI it starts sees (same machine, same build).
std::optional<Layer> FirstUnavailableLayer() {
  for (const LayerStatus& s : ProbeLayers()) {
    if (!s.available) return s.layer;
  }
  return std::nullopt;
}

TEST(CliTest, RequireFailsClosedIsolateDegradesAndSaysSo) {
  EXPECT_EQ(RunCli({"--require=selinux", "--", "/bin/true"}).status, kExitSandboxError);
  std::optional<Layer> missing = FirstUnavailableLayer();
  if (!missing) GTEST_SKIP() << "every isolation layer is available here";
  const std::string name(LayerName(*missing));
  CliRun required = RunCli({absl::StrCat("--require=", name), "--", "/bin/true"});
  EXPECT_EQ(required.status, kExitSandboxError);
  EXPECT_TRUE(absl::StrContains(required.err, name)) << required.err;
  CliRun degraded = RunCli({absl::StrCat("--isolate=", name), "--", "/bin/true"});
  EXPECT_EQ(degraded.status, 0);
  EXPECT_TRUE(absl::StrContains(degraded.err, absl::StrCat("isolation layer not applied: ", name))) << degraded.err;
  CliRun json = RunCli({"--json", absl::StrCat("--isolate=", name), "--", "/bin/true"});
  EXPECT_FALSE(ParseJson(json.out)["layers_unavailable"].empty());
}

TEST(CliTest, TimeoutExits124) {
  CliRun run = RunCli({"--timeout=0.3", "--grace=0.1", "--", "/bin/sleep", "10"});
  EXPECT_EQ(run.status, kExitTimeout);
  CliRun json = RunCli({"--json", "--timeout=0.3", "--", "/bin/sleep", "10"});
  EXPECT_EQ(json.status, kExitTimeout);
  EXPECT_EQ(ParseJson(json.out)["timed_out"], true);
}

TEST(CliTest, SignalExits128PlusN) {
  EXPECT_EQ(RunCli({"--", "/bin/sh", "-c", "kill -KILL $$"}).status, 128 + SIGKILL);
  CliRun fsize = RunCli({"--fsize=1000", "--", "/bin/sh", "-c", "exec head -c 5000 /dev/zero > f"});
  EXPECT_EQ(fsize.status, 128 + SIGXFSZ);
}

// Interrupting `sandbox` itself ends the command's whole group first (nothing keeps running).
TEST(CliTest, SigtermToSandboxEndsTheCommandGroup) {
  const std::string ws = TempDir();
  RunRequest request;
  request.argv = {"/bin/sh", "-c",
                  absl::StrCat(CliPath(), " --timeout=60 -- /bin/sh -c 'sleep 1000 & echo $! > ",
                               "bg.pid; wait' & cli=$!; ",
                               "while [ ! -s bg.pid ]; do sleep 0.05; done; kill -TERM $cli; ",
                               "wait $cli; echo status=$?")};
  request.cwd = ws;
  request.wall_timeout = absl::Seconds(30);
  absl::StatusOr<RunResult> result = sandbox::Run(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->timed_out);
  EXPECT_EQ(result->out.data, absl::StrCat("status=", 128 + SIGTERM, "\n")) << result->err.data;
  EXPECT_TRUE(absl::StrContains(result->err.data, "interrupted by signal 15")) << result->err.data;
  FILE* f = fopen((ws + "/bg.pid").c_str(), "r");
  ASSERT_NE(f, nullptr);
  int pid = -1;
  ASSERT_EQ(fscanf(f, "%d", &pid), 1);
  fclose(f);
  EXPECT_TRUE(sandbox::testing::IsGone(pid)) << "the command's background child survived";
}

TEST(CliTest, SandboxErrorsExit125WithOneLine) {
  CliRun run = RunCli({"--", "/no/such/program"});
  EXPECT_EQ(run.status, kExitSandboxError);
  EXPECT_TRUE(absl::StartsWith(run.err, "sandbox: exec failed: No such file or directory"))
      << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;

  CliRun json = RunCli({"--json", "--", "/no/such/program"});
  EXPECT_EQ(json.status, kExitSandboxError);
  EXPECT_EQ(ParseJson(json.out)["error"]["code"], "ENOENT");
}

TEST(CliTest, BadFlagsExit125WithOneLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus", "--", "true"}, {"--timeout=soon", "--", "true"}, {"--memory=12X", "true"},
           {"--json"}, {"--cwd=../up", "--", "/bin/true"}}) {
    CliRun run = RunCli(args);
    EXPECT_EQ(run.status, kExitSandboxError) << args[0];
    EXPECT_TRUE(absl::StartsWith(run.err, "sandbox: ")) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.out, "");
  }
}

TEST(CliTest, HelpListsEveryFlag) {
  CliRun run = RunCli({"--help"});
  EXPECT_EQ(run.status, 0);
  for (const FlagDoc& flag : AllFlags()) {
    EXPECT_TRUE(absl::StrContains(run.out, flag.name)) << flag.name;
  }
}

TEST(CliTest, EnvCwdStdinAndCap) {
  const std::string ws = TempDir();
  ASSERT_EQ(mkdir((ws + "/sub").c_str(), 0755), 0);
  CliRun pwd = RunCli({"--workspace=" + ws, "--cwd=sub", "--", "/bin/sh", "-c", "pwd -P"});
  EXPECT_EQ(pwd.out, ws + "/sub\n");

  CliRun env = RunCli({"--env=GREETING=hello world", "--", "/usr/bin/env"});
  std::vector<std::string> lines = absl::StrSplit(env.out, '\n', absl::SkipEmpty());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "GREETING=hello world"), lines.end()) << env.out;
  EXPECT_EQ(lines.size(), 4u) << env.out;  // PATH, HOME, LANG and ours: nothing of the parent.

  FILE* f = fopen((ws + "/in.txt").c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("line one\nline two\n", f);
  fclose(f);
  EXPECT_EQ(RunCli({"--stdin=in.txt", "--", "/bin/cat"}, ws).out, "line one\nline two\n");
  EXPECT_EQ(RunCli({"--stdin=-", "--", "/bin/cat"}, ws, "piped\n").out, "piped\n");

  CliRun capped = RunCli({"--json", "--output-cap=10", "--", "/bin/sh", "-c",
                          "head -c 100 /dev/zero | tr '\\0' a"});
  const nlohmann::json json = ParseJson(capped.out);
  EXPECT_EQ(json["stdout"]["data"], "aaaaaaaaaa");
  EXPECT_EQ(json["stdout"]["truncated"], true);
  EXPECT_EQ(json["stdout"]["total_bytes"], 100);
  CliRun noted = RunCli({"--output-cap=10", "--", "/bin/sh", "-c", "head -c 100 /dev/zero | tr '\\0' a"});
  EXPECT_EQ(noted.out, "aaaaaaaaaa");
  EXPECT_TRUE(absl::StrContains(noted.err, "stdout truncated: kept 10 of 100 bytes")) << noted.err;
}

}  // namespace
}  // namespace sandbox::cli

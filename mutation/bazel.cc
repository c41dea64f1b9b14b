#include "mutation/bazel.h"

#include <sys/stat.h>

#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mutation/process.h"

namespace mutation {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Sanitize(const std::string& tag) {
  std::string out;
  for (char c : tag) out += (absl::ascii_isalnum(c) || c == '-' || c == '_') ? c : '_';
  return out.substr(0, 120);
}

}  // namespace

std::vector<TargetResult> ParseTestSummary(const std::string& output) {
  std::vector<TargetResult> out;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!(absl::StartsWith(line, "//") || absl::StartsWith(line, "@"))) continue;
    std::size_t space = line.find(' ');
    if (space == absl::string_view::npos) continue;
    std::string label(line.substr(0, space));
    absl::string_view rest = absl::StripLeadingAsciiWhitespace(line.substr(space));
    absl::ConsumePrefix(&rest, "(cached) ");
    static const char* kStatuses[] = {"FAILED TO BUILD", "NO STATUS", "PASSED", "FAILED",
                                      "TIMEOUT",         "FLAKY",     "SKIPPED", "INCOMPLETE",
                                      "REMOTE FAILURE",  "BUILT"};
    for (const char* s : kStatuses) {
      if (absl::StartsWith(rest, s)) {
        out.push_back({label, s});
        break;
      }
    }
  }
  return out;
}

std::string FileLabel(const std::string& workspace, const std::string& path) {
  std::string dir = path;
  std::string name;
  while (true) {
    std::size_t slash = dir.rfind('/');
    std::string parent = slash == std::string::npos ? "" : dir.substr(0, slash);
    std::string base = slash == std::string::npos ? dir : dir.substr(slash + 1);
    name = name.empty() ? base : absl::StrCat(base, "/", name);
    std::string root = parent.empty() ? workspace : absl::StrCat(workspace, "/", parent);
    if (IsFile(root + "/BUILD.bazel") || IsFile(root + "/BUILD")) {
      return absl::StrCat("//", parent, ":", name);
    }
    if (parent.empty()) return "";
    dir = parent;
  }
}

absl::StatusOr<CommandResult> Bazel::Run(const std::string& command,
                                         const std::vector<std::string>& args, double timeout,
                                         const std::atomic<int>* stop, const std::string& tag) {
  ProcessSpec spec;
  spec.argv = {config_.binary, absl::StrCat("--output_base=", config_.output_base),
               absl::StrCat("--max_idle_secs=", config_.max_idle_secs), command};
  if (command != "shutdown") {
    for (const std::string& a : config_.command_args) spec.argv.push_back(a);
  }
  for (const std::string& a : args) spec.argv.push_back(a);
  spec.cwd = config_.workspace;
  spec.timeout_seconds = timeout;
  spec.stdout_path = absl::StrCat(config_.log_dir, "/", Sanitize(tag), ".log");
  absl::StatusOr<ProcessResult> pr = RunProcess(spec, stop);
  if (!pr.ok()) return pr.status();
  CommandResult r;
  r.exit_code = pr->exit_code;
  r.seconds = pr->seconds;
  r.log_path = spec.stdout_path;
  absl::StatusOr<std::string> output = ReadFile(spec.stdout_path);
  if (output.ok()) r.output = *std::move(output);
  if (pr->interrupted) {
    r.outcome = Outcome::kInterrupted;
  } else if (pr->timed_out) {
    r.outcome = Outcome::kTimedOut;
  } else if (pr->term_signal != 0) {
    r.outcome = Outcome::kBazelError;
  } else {
    switch (pr->exit_code) {
      case kBazelOk: r.outcome = Outcome::kPassed; break;
      case kBazelBuildFailed: r.outcome = Outcome::kBuildFailed; break;
      case kBazelTestsFailed: r.outcome = Outcome::kTestsFailed; break;
      case kBazelNoTests: r.outcome = Outcome::kNoTests; break;
      case kBazelInterrupted: r.outcome = Outcome::kInterrupted; break;
      default: r.outcome = Outcome::kBazelError; break;
    }
  }
  if (command == "test") r.targets = ParseTestSummary(r.output);
  return r;
}

namespace {

// Flags every build and test command gets. Build and test pass the SAME configuration flags: any
// difference makes Bazel discard its analysis cache on every switch (seconds per mutant).
//  - plain output, and no bazel-* convenience symlinks in the scratch tree;
//  - the shared disk cache, so a restored file is a cache hit;
//  - test results never from the cache: the baseline must really run to be timed, and a mutant
//    whose binary comes out byte-identical must still be judged by a run;
//  - stop at the first failing test target (--notest_keep_going; Bazel still exits 3) and at the
//    first failing case inside a gtest binary (GTEST_FAIL_FAST): one failure kills the mutant, the
//    rest of the suite is time spent for nothing.
std::vector<std::string> CommonBuildArgs(const BazelConfig& config) {
  std::vector<std::string> args = {"--color=no",
                                   "--curses=no",
                                   "--symlink_prefix=/",
                                   "--nocache_test_results",
                                   "--notest_keep_going",
                                   "--test_env=GTEST_FAIL_FAST=1"};
  if (!config.disk_cache.empty()) args.push_back(absl::StrCat("--disk_cache=", config.disk_cache));
  return args;
}

}  // namespace

absl::StatusOr<CommandResult> Bazel::Build(const std::vector<std::string>& targets,
                                           double timeout, const std::atomic<int>* stop,
                                           const std::string& tag) {
  std::vector<std::string> args = CommonBuildArgs(config_);
  args.push_back("--");
  args.insert(args.end(), targets.begin(), targets.end());
  return Run("build", args, timeout, stop, absl::StrCat(tag, "-build"));
}

absl::StatusOr<CommandResult> Bazel::Test(const std::vector<std::string>& targets, double timeout,
                                          const std::atomic<int>* stop,
                                          const std::string& tag) {
  std::vector<std::string> args = CommonBuildArgs(config_);
  args.push_back("--test_summary=short");
  args.push_back("--");
  args.insert(args.end(), targets.begin(), targets.end());
  return Run("test", args, timeout, stop, absl::StrCat(tag, "-test"));
}

absl::StatusOr<std::vector<std::string>> Bazel::TestsDependingOn(const std::string& path,
                                                                 const std::atomic<int>* stop) {
  std::string label = FileLabel(config_.workspace, path);
  if (label.empty()) return std::vector<std::string>{};
  std::string expr = absl::StrCat("kind(\".*_test rule\", rdeps(//..., ", label,
                                  ")) except attr(tags, \"\\bmanual\\b\", //...)");
  absl::StatusOr<CommandResult> r =
      Run("query", {"--output=label", "--noshow_progress", expr}, 0, stop,
          absl::StrCat("query-", path));
  if (!r.ok()) return r.status();
  if (r->outcome == Outcome::kInterrupted) return absl::CancelledError("interrupted");
  if (r->exit_code != 0) {
    // A file no rule mentions is no target at all: nothing can test it.
    if (absl::StrContains(r->output, "no such target") ||
        absl::StrContains(r->output, "not declared in package")) {
      return std::vector<std::string>{};
    }
    return absl::InternalError(absl::StrCat("bazel query for ", path, " failed (exit ",
                                            r->exit_code, "); see ", r->log_path));
  }
  std::vector<std::string> targets;
  for (absl::string_view line : absl::StrSplit(r->output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(line, "//") || absl::StartsWith(line, "@")) {
      targets.emplace_back(line);
    }
  }
  return targets;
}

absl::Status Bazel::Shutdown() {
  absl::StatusOr<CommandResult> r = Run("shutdown", {}, 120, nullptr, "shutdown");
  if (!r.ok()) return r.status();
  return r->exit_code == 0 ? absl::OkStatus()
                           : absl::InternalError(absl::StrCat("bazel shutdown exited ",
                                                              r->exit_code));
}

}  // namespace mutation

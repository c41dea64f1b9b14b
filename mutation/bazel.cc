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
  args.insert(args.end(), config.build_args.begin(), config.build_args.end());
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

absl::StatusOr<CommandResult> Bazel::BuildKeepGoing(const std::vector<std::string>& targets,
                                                    double timeout, const std::atomic<int>* stop,
                                                    const std::string& tag) {
  std::vector<std::string> args = CommonBuildArgs(config_);
  args.push_back("--keep_going");
  args.push_back("--");
  args.insert(args.end(), targets.begin(), targets.end());
  return Run("build", args, timeout, stop, absl::StrCat(tag, "-build"));
}

absl::StatusOr<std::string> Bazel::Info(const std::string& key, const std::atomic<int>* stop) {
  std::vector<std::string> args = CommonBuildArgs(config_);
  args.push_back(key);
  absl::StatusOr<CommandResult> r = Run("info", args, 0, stop, absl::StrCat("info-", key));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("bazel info ", key, " failed (exit ", r->exit_code,
                                            "); see ", r->log_path));
  }
  // The value is the last non-empty line (the server may print startup lines first).
  std::string value;
  for (absl::string_view line : absl::StrSplit(r->output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) value = std::string(line);
  }
  return value;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Bazel::RuleKinds(
    const std::vector<std::string>& targets, const std::atomic<int>* stop) {
  std::vector<std::pair<std::string, std::string>> out;
  if (targets.empty()) return out;
  std::string expr = "set(";
  for (const std::string& t : targets) absl::StrAppend(&expr, t, " ");
  expr += ")";
  absl::StatusOr<CommandResult> r =
      Run("query", {"--output=label_kind", "--noshow_progress", expr}, 0, stop, "query-kinds");
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("bazel query --output=label_kind failed (exit ", r->exit_code, "); see ",
                     r->log_path));
  }
  // "cc_test rule //sandbox:runner_test"
  for (absl::string_view line : absl::StrSplit(r->output, '\n')) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() == 3 && words[1] == "rule" && absl::StartsWith(words[2], "//")) {
      out.push_back({std::string(words[2]), std::string(words[0])});
    }
  }
  return out;
}

std::string ExpandTestArg(const std::string& arg, const std::string& package) {
  std::string out;
  std::size_t i = 0;
  while (i < arg.size()) {
    std::size_t open = arg.find("$(", i);
    if (open == std::string::npos) break;
    std::size_t close = arg.find(')', open);
    if (close == std::string::npos) break;
    out += arg.substr(i, open - i);
    std::string inner = arg.substr(open + 2, close - open - 2);
    std::size_t space = inner.find(' ');
    std::string fn = inner.substr(0, space);
    if (space == std::string::npos || (fn != "location" && fn != "locations" &&
                                       fn != "rootpath" && fn != "execpath")) {
      out += arg.substr(open, close + 1 - open);  // not ours: left as written
    } else {
      std::string label(absl::StripAsciiWhitespace(inner.substr(space + 1)));
      std::string pkg = package, name;
      if (absl::StartsWith(label, "//")) {
        std::size_t colon = label.find(':');
        pkg = label.substr(2, colon == std::string::npos ? std::string::npos : colon - 2);
        name = colon == std::string::npos ? pkg.substr(pkg.rfind('/') + 1) : label.substr(colon + 1);
      } else {
        name = absl::StartsWith(label, ":") ? label.substr(1) : label;
      }
      out += pkg.empty() ? name : absl::StrCat(pkg, "/", name);
    }
    i = close + 1;
  }
  out += arg.substr(std::min(i, arg.size()));
  return out;
}

absl::StatusOr<std::map<std::string, std::vector<std::string>>> Bazel::TestArgs(
    const std::vector<std::string>& targets, const std::atomic<int>* stop) {
  std::map<std::string, std::vector<std::string>> out;
  if (targets.empty()) return out;
  std::string expr = "set(";
  for (const std::string& t : targets) absl::StrAppend(&expr, t, " ");
  expr += ")";
  absl::StatusOr<CommandResult> r =
      Run("query", {"--output=build", "--noshow_progress", expr}, 0, stop, "query-args");
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("bazel query --output=build failed (exit ",
                                            r->exit_code, "); see ", r->log_path));
  }
  // Blocks: "# /abs/path/pkg/BUILD.bazel:12:8", "kind(", "  name = \"x\",", "  args = [...],", ")".
  std::string package, name;
  std::vector<std::string> args;
  std::string root = config_.workspace + "/";
  for (absl::string_view line : absl::StrSplit(r->output, '\n')) {
    if (absl::StartsWith(line, "# /")) {
      absl::string_view path = line.substr(2);
      path = path.substr(0, path.find(':'));
      if (absl::ConsumePrefix(&path, root) || absl::StartsWith(path, "/")) {
        std::size_t slash = path.rfind('/');
        package = slash == absl::string_view::npos ? "" : std::string(path.substr(0, slash));
      }
      name.clear();
      args.clear();
      continue;
    }
    absl::string_view t = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&t, "name = \"")) {
      name = std::string(t.substr(0, t.find('"')));
    } else if (absl::ConsumePrefix(&t, "args = [")) {
      // A list of double-quoted strings; quotes inside arguments are escaped as \".
      std::string current;
      bool in = false;
      for (std::size_t k = 0; k < t.size(); ++k) {
        char c = t[k];
        if (in && c == '\\' && k + 1 < t.size()) {
          current += t[++k];
        } else if (c == '"') {
          if (in) args.push_back(ExpandTestArg(current, package));
          current.clear();
          in = !in;
        } else if (in) {
          current += c;
        }
      }
    } else if (t == ")" && !name.empty()) {
      out[absl::StrCat("//", package, ":", name)] = args;
    }
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> Bazel::CompiledSources(
    const std::vector<std::string>& targets, const std::atomic<int>* stop) {
  std::vector<std::string> out;
  if (targets.empty()) return out;
  std::string expr = "kind(\"source file\", deps(set(";
  for (const std::string& t : targets) absl::StrAppend(&expr, t, " ");
  expr += ")))";
  // The same configuration flags as build and test: cquery must see the same select() branches,
  // and Bazel keeps its analysis cache.
  std::vector<std::string> args = CommonBuildArgs(config_);
  args.insert(args.end(), {"--output=label", "--noshow_progress", expr});
  absl::StatusOr<CommandResult> r = Run("cquery", args, 0, stop, "cquery-sources");
  if (!r.ok()) return r.status();
  if (r->outcome == Outcome::kInterrupted) return absl::CancelledError("interrupted");
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("bazel cquery for the compiled sources failed (exit ",
                                            r->exit_code, "); see ", r->log_path));
  }
  for (absl::string_view line : absl::StrSplit(r->output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(line, "//")) continue;
    out.emplace_back(line.substr(0, line.find(' ')));  // "//pkg:file.cc (null)"
  }
  return out;
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

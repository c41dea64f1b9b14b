// `bazel run //mutation:check -- [flags]`: injects single-line bugs into a scratch copy of the
// checkout and checks each one is caught by a test. See mutation/README.md.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include <climits>
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "mutation/engine.h"

namespace {

constexpr char kUsage[] = R"(usage: bazel run //mutation:check -- [flags]

Injects one single-line bug at a time into a scratch copy of the checkout (never the checkout
itself), builds it, runs the tests that depend on the mutated file and reports which bugs no test
noticed. Curated mutants come from mutation/catalog.json; generated ones from sandbox/ and agent/.

  --catalog-only        only the curated catalog (what CI runs)
  --generated-only      only generated mutants
  --list                print the selected mutants and exit; runs nothing
  --files=P[,P...]      only files equal to P or under directory P (repeatable)
  --in-diff=REV         only mutants on lines changed since git revision REV
  --shard=K/N           the K-th of N shards (0 <= K < N), for a CI matrix
  --jobs=N              N scratch copies, each with its own Bazel output base, run in parallel
                        (default 1: one output base, mutants in sequence)
  --engine=E            how generated mutants run: schemata (default: each file built once with
                        every mutant behind a run-time switch, tests picked per gtest case by
                        coverage and run from bazel-bin) or classic (one Bazel build and test
                        per mutant, as curated mutants always run)
  --test-jobs=N         test processes at once in the schemata engine (default: one per core)
  --timeout-factor=F    a mutant's tests time out after F x baseline + extra (default 3)
  --timeout-extra=S     the extra seconds (default 20)
  --build-timeout=S     a mutant's build gives up after S seconds (default 1800)
  --report-dir=DIR      where mutation.json / mutation.html / summary.txt go
                        (default: <cache-dir>/report, outside the checkout)
  --config=NAME         passed to every Bazel command, e.g. --config=remote (repeatable)
  --bazel-arg=ARG       any other Bazel command flag, passed through (repeatable)
  --bazel=PATH          the Bazel binary (default: bazel from PATH)
  --repo=DIR            the checkout (default: $BUILD_WORKSPACE_DIRECTORY, set by bazel run)
  --cache-dir=DIR       scratch copies and output bases (default:
                        ${XDG_CACHE_HOME:-~/.cache}/sandboxed-agent-mutation/<hash of repo path>)
  --catalog=PATH        the catalog: relative to the repo (default mutation/catalog.json), or an
                        absolute path
  --roots=D[,D...]      where mutants are generated (default sandbox,agent)
  --keep-server         leave the scratch Bazel server running for the next run
  --resume              take the verdicts an earlier run of this exact tree and these settings
                        recorded in its journal (<cache-dir>/journal/), and judge only the rest:
                        an interrupted run goes on where it stopped
  --help                this text

Exit codes:
  0    every curated mutant killed and the generated score at or above thresholds.break
  1    internal error: the runner or Bazel failed, nothing was judged
  2    usage error: bad flags, or a catalog entry / skip marker that does not match the code
  3    survivors: a curated mutant was not killed (survived, no covering test, or unviable)
  4    baseline failed: the unmutated tests fail, so nothing can be measured
  5    the generated mutation score is below thresholds.break (catalog.json)
  130  interrupted by SIGINT, 143 by SIGTERM (the checkout is never written; the scratch copy
       is restored, or resynced by the next run; the verdicts so far are kept for --resume)
)";

std::atomic<int> g_stop{0};

void OnSignal(int sig) {
  // Async-signal-safe: one lock-free atomic store.
  g_stop.store(sig);
}

bool Flag(const std::string& arg, const char* name, std::string* value) {
  std::string prefix = absl::StrCat(name, "=");
  if (absl::StartsWith(arg, prefix)) {
    *value = arg.substr(prefix.size());
    return true;
  }
  return false;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "mutation: %s\n(see --help)\n", message.c_str());
  return mutation::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  mutation::Options o;
  std::string value;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // "--flag value" is accepted as well as "--flag=value" for the flags that take one.
    static const char* kValued[] = {"--files", "--in-diff", "--shard", "--jobs",
                                    "--timeout-factor", "--timeout-extra", "--engine", "--test-jobs", "--build-timeout",
                                    "--report-dir", "--config", "--bazel-arg", "--bazel", "--repo",
                                    "--cache-dir", "--catalog", "--roots"};
    for (const char* name : kValued) {
      if (arg == name) {
        if (i + 1 >= argc) return Usage(absl::StrCat(name, " needs a value"));
        arg = absl::StrCat(name, "=", argv[++i]);
      }
    }
    double d = 0;
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return mutation::kExitOk;
    } else if (arg == "--catalog-only") {
      o.catalog_only = true;
    } else if (arg == "--generated-only") {
      o.generated_only = true;
    } else if (arg == "--list") {
      o.list = true;
    } else if (arg == "--keep-server") {
      o.keep_server = true;
    } else if (arg == "--resume") {
      o.resume = true;
    } else if (Flag(arg, "--files", &value)) {
      for (absl::string_view f : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        o.files.emplace_back(f);
      }
    } else if (Flag(arg, "--roots", &value)) {
      o.roots = absl::StrSplit(value, ',', absl::SkipEmpty());
    } else if (Flag(arg, "--in-diff", &value)) {
      o.in_diff = value;
    } else if (Flag(arg, "--shard", &value)) {
      if (!mutation::ParseShard(value, &o.shard_k, &o.shard_n)) {
        return Usage(absl::StrCat("--shard=", value, ": want K/N with 0 <= K < N"));
      }
    } else if (Flag(arg, "--jobs", &value)) {
      if (!absl::SimpleAtoi(value, &o.jobs) || o.jobs < 1 || o.jobs > 64) {
        return Usage(absl::StrCat("--jobs=", value, ": want an integer in 1..64"));
      }
    } else if (Flag(arg, "--engine", &value)) {
      if (value != "schemata" && value != "classic") {
        return Usage(absl::StrCat("--engine=", value, ": want schemata or classic"));
      }
      o.engine = value;
    } else if (Flag(arg, "--test-jobs", &value)) {
      if (!absl::SimpleAtoi(value, &o.test_jobs) || o.test_jobs < 1 || o.test_jobs > 64) {
        return Usage(absl::StrCat("--test-jobs=", value, ": want an integer in 1..64"));
      }
    } else if (Flag(arg, "--timeout-factor", &value)) {
      if (!absl::SimpleAtod(value, &d) || d < 1) return Usage("--timeout-factor: want a number >= 1");
      o.timeout_factor = d;
    } else if (Flag(arg, "--timeout-extra", &value)) {
      if (!absl::SimpleAtod(value, &d) || d < 0) return Usage("--timeout-extra: want seconds >= 0");
      o.timeout_extra = d;
    } else if (Flag(arg, "--build-timeout", &value)) {
      if (!absl::SimpleAtod(value, &d) || d <= 0) return Usage("--build-timeout: want seconds > 0");
      o.build_timeout = d;
    } else if (Flag(arg, "--report-dir", &value)) {
      o.report_dir = value;
    } else if (Flag(arg, "--config", &value)) {
      o.bazel_args.push_back(absl::StrCat("--config=", value));
    } else if (Flag(arg, "--bazel-arg", &value)) {
      o.bazel_args.push_back(value);
    } else if (Flag(arg, "--bazel", &value)) {
      o.bazel = value;
    } else if (Flag(arg, "--repo", &value)) {
      o.repo = value;
    } else if (Flag(arg, "--cache-dir", &value)) {
      o.cache_dir = value;
    } else if (Flag(arg, "--catalog", &value)) {
      o.catalog = value;
    } else {
      return Usage(absl::StrCat("unknown argument: ", arg));
    }
  }
  if (o.catalog_only && o.generated_only) {
    return Usage("--catalog-only and --generated-only exclude each other");
  }
  if (o.repo.empty()) {
    const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
    if (ws == nullptr || *ws == '\0') {
      return Usage("no checkout: run through `bazel run //mutation:check` or pass --repo=DIR");
    }
    o.repo = ws;
  }
  char resolved[PATH_MAX];
  if (realpath(o.repo.c_str(), resolved) == nullptr) {
    return Usage(absl::StrCat("--repo=", o.repo, ": no such directory"));
  }
  o.repo = resolved;
  if (o.cache_dir.empty()) {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    std::string base = xdg != nullptr && *xdg != '\0'
                           ? std::string(xdg)
                           : absl::StrCat(home != nullptr ? home : "/tmp", "/.cache");
    // The repo path's hash keeps two checkouts from sharing (and fighting over) one scratch copy.
    o.cache_dir = absl::StrFormat("%s/sandboxed-agent-mutation/%016x", base,
                                  static_cast<unsigned long long>(std::hash<std::string>{}(o.repo)));
  }
  // The report must never land in the checkout unless asked for explicitly.
  if (!o.report_dir.empty() && o.report_dir[0] != '/') {
    const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
    o.report_dir = absl::StrCat(cwd != nullptr ? cwd : ".", "/", o.report_dir);
  }

  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return mutation::RunMutation(o, &g_stop);
}

#include "mutation/engine.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mutation/bazel.h"
#include "mutation/catalog.h"
#include "mutation/generate.h"
#include "mutation/journal.h"
#include "mutation/mutant.h"
#include "mutation/process.h"
#include "mutation/report.h"
#include "mutation/schemata.h"
#include "mutation/scratch.h"

namespace mutation {

bool ParseShard(const std::string& text, int* k, int* n) {
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() != 2) return false;
  if (!absl::SimpleAtoi(parts[0], k) || !absl::SimpleAtoi(parts[1], n)) return false;
  return *n >= 1 && *k >= 0 && *k < *n;
}

std::vector<std::pair<std::string, std::vector<std::pair<int, int>>>> ParseDiffHunks(
    const std::string& diff) {
  std::vector<std::pair<std::string, std::vector<std::pair<int, int>>>> out;
  for (absl::string_view line : absl::StrSplit(diff, '\n')) {
    if (absl::ConsumePrefix(&line, "+++ ")) {
      absl::ConsumePrefix(&line, "b/");
      out.push_back({std::string(line), {}});
      continue;
    }
    if (!absl::ConsumePrefix(&line, "@@ ") || out.empty()) continue;
    // "-a,b +c,d @@": the new side starts at c and spans d lines (1 when ",d" is absent).
    std::size_t plus = line.find('+');
    if (plus == absl::string_view::npos) continue;
    absl::string_view spec = line.substr(plus + 1);
    spec = spec.substr(0, spec.find(' '));
    std::vector<absl::string_view> cd = absl::StrSplit(spec, ',');
    int start = 0, count = 1;
    if (!absl::SimpleAtoi(cd[0], &start)) continue;
    if (cd.size() > 1 && !absl::SimpleAtoi(cd[1], &count)) continue;
    if (count > 0) out.back().second.push_back({start, start + count - 1});
  }
  return out;
}

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Say(const std::string& s) { std::fprintf(stderr, "mutation: %s\n", s.c_str()); }

// The progress line: rewritten in place on a terminal, one plain line per mutant otherwise.
class Progress {
 public:
  Progress(int total, int jobs) : total_(total), jobs_(jobs), tty_(isatty(2) != 0), start_(Now()) {}

  void Done(const Mutant& m) {
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    switch (m.status) {
      case MutantStatus::kKilled: ++killed_; break;
      case MutantStatus::kSurvived: ++survived_; break;
      case MutantStatus::kNoCoverage: ++no_coverage_; break;
      case MutantStatus::kTimeout: ++timeouts_; break;
      case MutantStatus::kCompileError: ++unviable_; break;
      default: ++other_; break;
    }
    double elapsed = Now() - start_;
    double eta = done_ == 0 ? 0 : elapsed / done_ * (total_ - done_);
    std::string counts = absl::StrFormat(
        "[%d/%d] killed %d, survived %d, no coverage %d, timeouts %d, unviable %d, errors %d; "
        "ETA %dm%02ds",
        done_, total_, killed_, survived_, no_coverage_, timeouts_, unviable_, other_,
        static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s  %s:%d %s", counts.c_str(), m.file.c_str(), m.line,
                   StatusName(m.status));
      if (done_ == total_) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "mutant %d/%d %s %s %s%s%s (%.1fs) | %s\n", done_, total_,
                   m.id.c_str(), StatusName(m.status), m.killed_by.empty() ? "" : "by ",
                   absl::StrJoin(m.killed_by, ",").c_str(),
                   m.status_reason.empty() ? "" : absl::StrCat(" [", m.status_reason, "]").c_str(),
                   m.seconds, counts.c_str());
    }
    std::fflush(stderr);
  }

  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (tty_ && done_ != total_) std::fprintf(stderr, "\n");
  }

 private:
  std::mutex mu_;
  int total_, jobs_;
  bool tty_;
  double start_;
  int done_ = 0, killed_ = 0, survived_ = 0, no_coverage_ = 0, timeouts_ = 0, unviable_ = 0,
      other_ = 0;
};

// The compiler's first error line of a failed build ("file.cc:12:3: error: ..."), else Bazel's
// first ERROR line, for the report.
std::string FirstError(const std::string& output) {
  for (const char* marker : {": error:", "ERROR:"}) {
    for (absl::string_view line : absl::StrSplit(output, '\n')) {
      if (absl::StrContains(line, marker)) return std::string(line.substr(0, 300));
    }
  }
  return "the build failed";
}

}  // namespace

// The gtest cases that failed ("[  FAILED  ] Suite.Case (12 ms)"), from the test logs Bazel prints
// for failing targets: they show WHAT caught the mutant, so a kill by an unrelated (flaky) case
// stands out in the report.
std::vector<std::string> FailedCases(const std::string& output) {
  std::vector<std::string> cases;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::ConsumePrefix(&line, "[  FAILED  ] ")) continue;
    std::size_t end = line.find(' ');
    absl::string_view name = absl::StripSuffix(line.substr(0, end), ",");
    if (name.empty() || !absl::StrContains(name, ".")) continue;  // the "N tests, listed below" line
    if (std::find(cases.begin(), cases.end(), name) == cases.end()) cases.emplace_back(name);
  }
  return cases;
}

namespace {

struct Worker {
  std::unique_ptr<Scratch> scratch;
  std::unique_ptr<Bazel> bazel;
};

struct Shared {
  const Options* options;
  const std::atomic<int>* stop;
  const std::map<std::string, std::string>* sources;
  double test_timeout = 0;
  std::atomic<bool> fatal{false};
  std::mutex mu;
  std::string fatal_message;
};

// Runs one mutant in `w`'s scratch copy; the file is restored before this returns, whatever
// happened (the cleanup runs on every path).
void RunOne(Mutant* m, Worker* w, Shared* shared) {
  const std::string& original = shared->sources->at(m->file);
  if (m->covered_by.empty()) {
    m->status = MutantStatus::kNoCoverage;
    m->status_reason = absl::StrCat("no test target depends on ", m->file);
    return;
  }
  std::string mutated;
  if (!ApplyMutant(*m, original, &mutated)) {
    m->status = MutantStatus::kRuntimeError;
    m->status_reason = "applying the mutation did not change the file";
    return;
  }
  double start = Now();
  if (absl::Status s = w->scratch->WriteMutant(m->file, mutated); !s.ok()) {
    m->status = MutantStatus::kRuntimeError;
    m->status_reason = std::string(s.message());
    return;
  }
  absl::Cleanup restore = [&] {
    absl::Status s = w->scratch->Restore(m->file, original);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(shared->mu);
      shared->fatal = true;
      shared->fatal_message = absl::StrCat("cannot restore the scratch copy: ", s.message());
    }
    m->seconds = Now() - start;
  };
  // Check the file on disk really is the mutant (a stale cache or a racing editor would make the
  // run measure the original).
  absl::StatusOr<std::string> on_disk = ReadFile(w->scratch->tree() + "/" + m->file);
  if (!on_disk.ok() || *on_disk != mutated) {
    m->status = MutantStatus::kRuntimeError;
    m->status_reason = "the mutated file on disk is not the mutant";
    return;
  }
  const Options& o = *shared->options;
  std::string tag = m->id;
  absl::StatusOr<CommandResult> build =
      w->bazel->Build(m->covered_by, o.build_timeout, shared->stop, tag);
  if (!build.ok()) {
    m->status = MutantStatus::kRuntimeError;
    m->status_reason = std::string(build.status().message());
    return;
  }
  switch (build->outcome) {
    case Outcome::kPassed: break;
    case Outcome::kInterrupted: m->status = MutantStatus::kPending; return;
    case Outcome::kBuildFailed:
      m->status = MutantStatus::kCompileError;
      m->status_reason = FirstError(build->output);
      return;
    default:
      m->status = MutantStatus::kRuntimeError;
      m->status_reason = absl::StrCat("bazel build exited ", build->exit_code,
                                      build->outcome == Outcome::kTimedOut ? " (build timeout)" : "",
                                      "; see ", build->log_path);
      return;
  }
  absl::StatusOr<CommandResult> test =
      w->bazel->Test(m->covered_by, shared->test_timeout, shared->stop, tag);
  if (!test.ok()) {
    m->status = MutantStatus::kRuntimeError;
    m->status_reason = std::string(test.status().message());
    return;
  }
  switch (test->outcome) {
    case Outcome::kPassed: m->status = MutantStatus::kSurvived; break;
    case Outcome::kTestsFailed: {
      std::vector<std::string> timed_out;
      for (const TargetResult& t : test->targets) {
        if (t.status == "FAILED") m->killed_by.push_back(t.label);
        if (t.status == "TIMEOUT") timed_out.push_back(t.label);
      }
      if (m->killed_by.empty() && !timed_out.empty()) {
        m->status = MutantStatus::kTimeout;
        m->killed_by = timed_out;
        m->status_reason = "Bazel's test timeout";
      } else {
        m->status = MutantStatus::kKilled;
        std::vector<std::string> cases = FailedCases(test->output);
        if (!cases.empty()) {
          m->status_reason = absl::StrCat("failed: ", absl::StrJoin(cases, ", "));
        } else if (m->killed_by.empty()) {
          m->status_reason = absl::StrCat("bazel test exited 3; see ", test->log_path);
        }
      }
      break;
    }
    case Outcome::kTimedOut:
      m->status = MutantStatus::kTimeout;
      m->status_reason = absl::StrFormat("tests ran past %.0fs", shared->test_timeout);
      break;
    case Outcome::kBuildFailed:
      m->status = MutantStatus::kCompileError;
      m->status_reason = FirstError(test->output);
      break;
    case Outcome::kNoTests:
      m->status = MutantStatus::kNoCoverage;
      m->status_reason = "bazel found no tests to run";
      break;
    case Outcome::kInterrupted: m->status = MutantStatus::kPending; break;
    case Outcome::kBazelError:
      m->status = MutantStatus::kRuntimeError;
      m->status_reason =
          absl::StrCat("bazel test exited ", test->exit_code, "; see ", test->log_path);
      break;
  }
}

bool MatchesFileFilter(const std::string& file, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  for (const std::string& f : filters) {
    std::string dir(absl::StripSuffix(f, "/"));
    if (file == f || absl::StartsWith(file, dir + "/")) return true;
  }
  return false;
}

// One run, as a flat list of named steps. Each step returns kContinue or the exit code to stop with.
class Session {
 public:
  static constexpr int kContinue = -1;

  Session(const Options& o, const std::atomic<int>* stop) : o_(o), stop_(stop) {}

  int Run() {
    for (int (Session::*step)() : {&Session::ListCheckout, &Session::LoadCatalog,
                                    &Session::Generate, &Session::Select}) {
      if (int rc = (this->*step)(); rc != kContinue) return rc;
    }
    if (o_.list) return List();
    if (selected_.empty()) {
      Say("no mutants selected; nothing to do");
      return kExitOk;
    }
    if (int rc = Lock(); rc != kContinue) return rc;
    absl::Cleanup unlock = [this] { close(lock_fd_); };
    if (int rc = PrepareScratch(); rc != kContinue) return rc;
    absl::Cleanup shutdown = [this] {
      if (o_.keep_server) return;
      for (Worker& w : workers_) w.bazel->Shutdown().IgnoreError();
    };
    for (int (Session::*step)() : {&Session::FindCoverage, &Session::OpenJournal,
                                    &Session::Baseline}) {
      if (int rc = (this->*step)(); rc != kContinue) return rc;
    }
    RunMutants();
    if (int rc = RunSchemataPhase(); rc != kContinue) {
      WriteReports();
      return rc;
    }
    if (int rc = WriteReports(); rc != kContinue) return rc;
    return Verdict();
  }

 private:
  bool Stopping() const { return stop_->load() != 0; }
  int Interrupted() const { return 128 + stop_->load(); }

  absl::StatusOr<std::string> Read(const std::string& path) const {
    if (file_set_.count(path) == 0) {
      return absl::NotFoundError(absl::StrCat(path, ": not in the checkout"));
    }
    return ReadFile(o_.repo + "/" + path);
  }

  // What the checkout holds; it is only ever read from here on.
  int ListCheckout() {
    tmp_ = o_.cache_dir + "/tmp";
    if (absl::Status s = MakeDirs(tmp_); !s.ok()) {
      Say(absl::StrCat("cannot create the cache directory: ", s.message()));
      return kExitInternal;
    }
    absl::StatusOr<std::vector<std::string>> files = ListRepoFiles(o_.repo, tmp_);
    if (!files.ok()) {
      Say(std::string(files.status().message()));
      return kExitInternal;
    }
    files_ = *std::move(files);
    file_set_.insert(files_.begin(), files_.end());
    for (const std::string& f : o_.files) {
      if (std::none_of(files_.begin(), files_.end(),
                       [&](const std::string& p) { return MatchesFileFilter(p, {f}); })) {
        Say(absl::StrCat("--files ", f, ": no such file or directory in the checkout"));
        return kExitUsage;
      }
    }
    return kContinue;
  }

  // The catalog, checked against the code before anything runs. Generated-only runs still take
  // the thresholds from it, the one place they live.
  int LoadCatalog() {
    // A relative path is a file of the checkout (the catalog follows the code); an absolute one is
    // read as is (a catalog kept outside, e.g. to try entries against another branch).
    absl::StatusOr<std::string> text =
        absl::StartsWith(o_.catalog, "/") ? ReadFile(o_.catalog) : Read(o_.catalog);
    if (o_.generated_only) {
      if (!text.ok()) return kContinue;
      if (absl::StatusOr<Catalog> parsed = ParseCatalog(*text); parsed.ok()) {
        catalog_.thresholds = parsed->thresholds;
      }
      return kContinue;
    }
    if (!text.ok()) {
      Say(absl::StrCat("catalog ", o_.catalog, ": ", text.status().message()));
      return kExitUsage;
    }
    absl::StatusOr<Catalog> parsed = ParseCatalog(*text);
    if (!parsed.ok()) {
      Say(absl::StrCat(o_.catalog, ": ", parsed.status().message()));
      return kExitUsage;
    }
    catalog_ = *std::move(parsed);
    absl::StatusOr<std::vector<Mutant>> curated =
        ResolveCatalog(catalog_, [this](const std::string& p) { return Read(p); });
    if (!curated.ok()) {
      Say(absl::StrCat(o_.catalog, ": ", curated.status().message()));
      return kExitUsage;
    }
    mutants_ = *std::move(curated);
    return kContinue;
  }

  int Generate() {
    if (o_.catalog_only) return kContinue;
    for (const std::string& f : files_) {
      bool under_root = std::any_of(o_.roots.begin(), o_.roots.end(), [&](const std::string& r) {
        return absl::StartsWith(f, std::string(absl::StripSuffix(r, "/")) + "/");
      });
      if (!under_root || !IsGeneratedSource(f)) continue;
      absl::StatusOr<std::string> text = Read(f);
      if (!text.ok()) {
        Say(std::string(text.status().message()));
        return kExitInternal;
      }
      std::string skipped_because;
      absl::StatusOr<std::vector<Mutant>> gen = GenerateMutants(f, *text, &skipped_because);
      if (!gen.ok()) {
        Say(std::string(gen.status().message()));
        return kExitUsage;
      }
      if (!skipped_because.empty()) {
        Say(absl::StrCat(f, ": no generated mutants (skip-file: ", skipped_because, ")"));
      }
      mutants_.insert(mutants_.end(), gen->begin(), gen->end());
    }
    return kContinue;
  }

  // --files, --in-diff, --shard, in that order, so shards split what is selected.
  int Select() {
    std::map<std::string, std::vector<std::pair<int, int>>> changed;
    if (!o_.in_diff.empty()) {
      ProcessSpec spec;
      spec.argv = {"git", "-C", o_.repo, "diff", "-U0", "--no-color", "--no-ext-diff", o_.in_diff,
                   "--"};
      spec.stdout_path = tmp_ + "/in-diff.out";
      spec.stderr_path = tmp_ + "/in-diff.err";
      absl::StatusOr<ProcessResult> r = RunProcess(spec, stop_);
      if (!r.ok() || r->exit_code != 0) {
        absl::StatusOr<std::string> err = ReadFile(spec.stderr_path);
        Say(absl::StrCat("--in-diff ", o_.in_diff, ": git diff failed: ", err.ok() ? *err : ""));
        return kExitUsage;
      }
      absl::StatusOr<std::string> diff = ReadFile(spec.stdout_path);
      if (!diff.ok()) return kExitInternal;
      for (auto& [file, ranges] : ParseDiffHunks(*diff)) changed[file] = ranges;
    }
    int index = 0;
    for (Mutant& m : mutants_) {
      if (!MatchesFileFilter(m.file, o_.files)) continue;
      if (!o_.in_diff.empty()) {
        auto it = changed.find(m.file);
        if (it == changed.end()) continue;
        bool touched = std::any_of(it->second.begin(), it->second.end(), [&](auto range) {
          return m.line <= range.second && m.end_line >= range.first;
        });
        if (!touched) continue;
      }
      if (index++ % o_.shard_n != o_.shard_k) continue;
      selected_.push_back(std::move(m));
    }
    curated_count_ = static_cast<int>(std::count_if(
        selected_.begin(), selected_.end(), [](const Mutant& m) { return m.curated; }));
    for (const Mutant& m : selected_) {
      if (sources_.count(m.file) == 0) sources_[m.file] = *Read(m.file);
    }
    return kContinue;
  }

  // One mutant per line; newlines inside a snippet are shown as \n.
  int List() const {
    auto one_line = [](const std::string& s) { return absl::StrReplaceAll(s, {{"\n", "\\n"}}); };
    for (const Mutant& m : selected_) {
      std::printf("%s\t%s:%d:%d\t%s\t%s -> %s%s\n", m.id.c_str(), m.file.c_str(), m.line, m.column,
                  m.mutator.c_str(), one_line(m.original).c_str(), one_line(m.replacement).c_str(),
                  m.curated ? absl::StrCat("\t[", m.boundary, "]").c_str() : "");
    }
    std::printf("%zu mutants (%d curated, %zu generated)\n", selected_.size(), curated_count_,
                selected_.size() - curated_count_);
    return kExitOk;
  }

  // One run per cache directory at a time.
  int Lock() {
    std::string lock_path = o_.cache_dir + "/lock";
    lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0 || flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      Say(absl::StrCat("another mutation run holds ", lock_path, "; wait for it or use --cache-dir"));
      return kExitInternal;
    }
    return kContinue;
  }

  // Scratch copies, one per job, each with its own output base; one shared disk cache.
  int PrepareScratch() {
    int jobs = std::max(1, o_.jobs);
    workers_.resize(jobs);
    std::string log_dir = o_.cache_dir + "/logs";
    if (!MakeDirs(log_dir).ok()) return kExitInternal;
    for (int j = 0; j < jobs; ++j) {
      workers_[j].scratch = std::make_unique<Scratch>(absl::StrCat(o_.cache_dir, "/work-", j));
      double t0 = Now();
      absl::StatusOr<SyncStats> stats = workers_[j].scratch->Sync(o_.repo, files_);
      if (!stats.ok()) {
        Say(absl::StrCat("syncing the scratch copy: ", stats.status().message()));
        return kExitInternal;
      }
      if (!stats->left_dirty.empty()) {
        Say(absl::StrCat("scratch copy ", j, " was left dirty by an interrupted run (",
                         stats->left_dirty, "); resynced"));
      }
      Say(absl::StrFormat("scratch copy %d: %d copied, %d removed, %d unchanged (%.1fs) in %s", j,
                          stats->copied, stats->removed, stats->unchanged, Now() - t0,
                          workers_[j].scratch->tree()));
      BazelConfig bc;
      bc.binary = o_.bazel;
      bc.workspace = workers_[j].scratch->tree();
      bc.output_base = absl::StrCat(o_.cache_dir, "/output-base-", j);
      bc.disk_cache = o_.cache_dir + "/disk-cache";
      bc.log_dir = log_dir;
      bc.command_args = o_.bazel_args;
      workers_[j].bazel = std::make_unique<Bazel>(bc);
      if (Stopping()) return Interrupted();
    }
    return kContinue;
  }

  // Which test targets depend on each mutated file (bazel query rdeps).
  int FindCoverage() {
    std::map<std::string, std::vector<std::string>> tests_of;
    std::set<std::string> all_targets;
    for (const auto& [file, text] : sources_) {
      absl::StatusOr<std::vector<std::string>> t = workers_[0].bazel->TestsDependingOn(file, stop_);
      if (Stopping()) return Interrupted();
      if (!t.ok()) {
        Say(std::string(t.status().message()));
        return kExitInternal;
      }
      tests_of[file] = *t;
      all_targets.insert(t->begin(), t->end());
      Say(absl::StrCat(file, ": ", t->size(), " test target(s)"));
    }
    // A file a select() leaves out of this configuration (runner_posix.cc on Linux, macOS files)
    // is compiled by none of its "covering" targets: its mutants are not judged here at all.
    std::set<std::string> compiled;
    if (!all_targets.empty()) {
      absl::StatusOr<std::vector<std::string>> sources = workers_[0].bazel->CompiledSources(
          std::vector<std::string>(all_targets.begin(), all_targets.end()), stop_);
      if (Stopping()) return Interrupted();
      if (!sources.ok()) {
        Say(std::string(sources.status().message()));
        return kExitInternal;
      }
      compiled.insert(sources->begin(), sources->end());
    }
    for (Mutant& m : selected_) {
      m.covered_by = tests_of[m.file];
      if (!m.covered_by.empty() && compiled.count(FileLabel(o_.repo, m.file)) == 0) {
        m.status = MutantStatus::kIgnored;
        m.status_reason = absl::StrCat(
            "not built in this configuration (a select() leaves ", m.file,
            " out); run with the configuration that builds it, e.g. --config=portable");
        m.covered_by.clear();
        continue;
      }
      (Classic(m) ? classic_ : switched_).push_back(&m);
    }
    SetBaselineTargets();
    return kContinue;
  }

  // Every test target a classic mutant needs: what the baseline builds and tests.
  void SetBaselineTargets() {
    std::set<std::string> all;
    for (const Mutant* m : classic_) all.insert(m->covered_by.begin(), m->covered_by.end());
    targets_.assign(all.begin(), all.end());
  }

  // The verdict journal (journal.h), named after the content of every checkout file and the
  // settings that change a verdict. Without --resume it starts empty; with it, the mutants it
  // already judged take their verdict from it and are not run again.
  int OpenJournal() {
    std::string settings = absl::StrCat(
        "engine=", o_.engine, "\ntimeout-factor=", o_.timeout_factor,
        "\ntimeout-extra=", o_.timeout_extra, "\nbazel-args=", absl::StrJoin(o_.bazel_args, "\x1f"),
        "\ncatalog=", o_.catalog);
    std::vector<std::string> paths = files_;
    if (absl::StartsWith(o_.catalog, "/")) paths.push_back(o_.catalog);
    absl::StatusOr<std::string> key = TreeKey(
        paths,
        [this](const std::string& p) { return absl::StartsWith(p, "/") ? ReadFile(p) : Read(p); },
        settings);
    if (!key.ok()) {
      Say(absl::StrCat("journal: cannot read the checkout: ", key.status().message()));
      return kExitInternal;
    }
    std::string dir = o_.cache_dir + "/journal";
    if (absl::Status s = MakeDirs(dir); !s.ok()) {
      Say(absl::StrCat("journal: ", s.message()));
      return kExitInternal;
    }
    std::string path = absl::StrCat(dir, "/", *key, ".jsonl");
    if (o_.resume) Resume(path);
    absl::StatusOr<std::unique_ptr<Journal>> journal = Journal::Open(path, o_.resume);
    if (!journal.ok()) {
      Say(std::string(journal.status().message()));
      return kExitInternal;
    }
    journal_ = *std::move(journal);
    return kContinue;
  }

  void Resume(const std::string& path) {
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      Say("--resume: no journal of an earlier run of this exact tree and these settings; "
          "judging every mutant");
      return;
    }
    JournalState state = ParseJournal(*text);
    auto take = [&](std::vector<Mutant*>* list) {
      std::vector<Mutant*> rest;
      for (Mutant* m : *list) {
        auto it = state.verdicts.find(m->id);
        if (it == state.verdicts.end()) {
          rest.push_back(m);
          continue;
        }
        ApplyVerdict(it->second, m);
        ++resumed_;
      }
      *list = std::move(rest);
    };
    take(&classic_);
    take(&switched_);
    SetBaselineTargets();
    earlier_runs_ = state.runs;
    earlier_seconds_ = state.seconds;
    Say(absl::StrFormat(
        "--resume: %d verdicts taken from %s (%d earlier run(s) recorded, %.0fs)%s; %zu mutants "
        "left to judge",
        resumed_, path, state.runs, state.seconds,
        state.torn_lines > 0 ? absl::StrFormat(", %d torn line(s) ignored", state.torn_lines) : "",
        classic_.size() + switched_.size()));
  }

  // The unmutated build and tests in every scratch copy (which also warms each output base); the
  // first copy's test time sets the mutants' timeout. Failing tests refuse the run.
  int Baseline() {
    shared_.options = &o_;
    shared_.stop = stop_;
    shared_.sources = &sources_;
    if (targets_.empty()) return kContinue;
    int jobs = static_cast<int>(workers_.size());
    Say(absl::StrFormat("baseline: building and testing %zu target(s) unmutated in %d scratch "
                        "cop%s: %s",
                        targets_.size(), jobs, jobs == 1 ? "y" : "ies",
                        absl::StrJoin(targets_, " ")));
    std::vector<std::string> problems(jobs);
    std::vector<double> seconds(jobs, 0);
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j) {
      threads.emplace_back([&, j] { problems[j] = BaselineIn(*workers_[j].bazel, &seconds[j]); });
    }
    for (std::thread& t : threads) t.join();
    if (Stopping()) return Interrupted();
    for (const std::string& p : problems) {
      if (!p.empty()) {
        Say(absl::StrCat("refusing to start: ", p));
        return kExitBaseline;
      }
    }
    shared_.test_timeout = o_.timeout_factor * seconds[0] + o_.timeout_extra;
    Say(absl::StrFormat("baseline: %zu test target(s) pass in %.1fs; mutant test timeout %.0fs",
                        targets_.size(), seconds[0], shared_.test_timeout));
    return kContinue;
  }

  // What is wrong with the baseline in one copy, or "" when it passes (its test time in *seconds).
  std::string BaselineIn(Bazel& b, double* seconds) {
    absl::StatusOr<CommandResult> build = b.Build(targets_, 0, stop_, "baseline");
    if (!build.ok()) return std::string(build.status().message());
    if (build->outcome != Outcome::kPassed) {
      return absl::StrCat("the baseline build failed (exit ", build->exit_code, "): ",
                          FirstError(build->output), "; see ", build->log_path);
    }
    absl::StatusOr<CommandResult> test = b.Test(targets_, 0, stop_, "baseline");
    if (!test.ok()) return std::string(test.status().message());
    if (test->outcome != Outcome::kPassed) {
      std::vector<std::string> failed;
      for (const TargetResult& t : test->targets) {
        if (t.status != "PASSED") failed.push_back(absl::StrCat(t.label, " ", t.status));
      }
      return absl::StrCat("the baseline tests fail (exit ", test->exit_code, "): ",
                          absl::StrJoin(failed, ", "), "; see ", test->log_path);
    }
    *seconds = test->seconds;
    return "";
  }

  // Curated mutants always take the classic path (their replacements are free text, and they are
  // what CI judges); generated ones unless --engine=classic.
  bool Classic(const Mutant& m) const { return m.curated || o_.engine == "classic"; }

  // Every worker takes the next mutant until none are left or a stop is asked for.
  void RunMutants() {
    int jobs = static_cast<int>(workers_.size());
    double start = Now();
    if (!classic_.empty()) {
      Say(absl::StrFormat("running %zu mutants (%d curated), one build each, with %d job(s)",
                          classic_.size(), curated_count_, jobs));
    }
    Progress progress(static_cast<int>(classic_.size()), jobs);
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j) {
      threads.emplace_back([&, j] {
        while (!Stopping() && !shared_.fatal) {
          std::size_t i = next++;
          if (i >= classic_.size()) break;
          RunOne(classic_[i], &workers_[j], &shared_);
          if (classic_[i]->status != MutantStatus::kPending) {
            progress.Done(*classic_[i]);
            journal_->Record(*classic_[i]);
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    progress.Finish();
    wall_seconds_ += Now() - start;
  }

  // Generated mutants under the schemata engine, in the first scratch copy.
  int RunSchemataPhase() {
    if (switched_.empty() || Stopping() || shared_.fatal) return kContinue;
    int test_jobs = o_.test_jobs > 0
                        ? o_.test_jobs
                        : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    Say(absl::StrFormat("running %zu generated mutants with the schemata engine, %d test "
                        "process(es) at once",
                        switched_.size(), test_jobs));
    double start = Now();
    Progress progress(static_cast<int>(switched_.size()), test_jobs);
    SchemataConfig sc;
    sc.scratch = workers_[0].scratch.get();
    sc.bazel = workers_[0].bazel.get();
    sc.sources = &sources_;
    sc.work_dir = o_.cache_dir + "/schemata";
    sc.test_jobs = test_jobs;
    sc.timeout_factor = o_.timeout_factor;
    sc.timeout_extra = o_.timeout_extra;
    sc.build_timeout = o_.build_timeout;
    sc.on_done = [this, &progress](const Mutant& m) {
      progress.Done(m);
      journal_->Record(m);
    };
    std::string message;
    int rc = RunSchemata(sc, switched_, stop_, &message);
    progress.Finish();
    wall_seconds_ += Now() - start;
    if (rc == 0) return kContinue;
    if (!message.empty()) {
      Say(rc == kExitBaseline ? absl::StrCat("refusing to judge generated mutants: ", message)
                              : message);
    }
    return rc;
  }

  // Reports, also for an interrupted run (what did not run stays Pending).
  int WriteReports() {
    std::string dir = o_.report_dir.empty() ? o_.cache_dir + "/report" : o_.report_dir;
    if (absl::Status s = MakeDirs(dir); !s.ok()) {
      Say(absl::StrCat("report dir: ", s.message()));
      return kExitInternal;
    }
    const Thresholds& th = catalog_.thresholds;
    std::string summary = TerminalSummary(selected_, sources_, th);
    absl::Status w1 =
        WriteFileAtomic(dir + "/mutation.json", JsonReport(selected_, sources_, th).dump(2));
    absl::Status w2 = WriteFileAtomic(dir + "/mutation.html", HtmlReport(selected_, sources_, th));
    absl::Status w3 = WriteFileAtomic(dir + "/summary.txt", summary);
    std::printf("%s", summary.c_str());
    int ran = static_cast<int>(std::count_if(selected_.begin(), selected_.end(), [](const Mutant& m) {
      return m.status != MutantStatus::kPending;
    }));
    int judged = ran - resumed_ - static_cast<int>(std::count_if(
                                       selected_.begin(), selected_.end(), [](const Mutant& m) {
                                         return m.status == MutantStatus::kIgnored;
                                       }));
    if (journal_ != nullptr) journal_->RecordRun(judged, wall_seconds_);
    if (resumed_ > 0) {
      double total = earlier_seconds_ + wall_seconds_;
      std::printf("%d mutants judged in %.0fs (%.1f per minute), %d taken from the journal of %d "
                  "earlier run(s) (%.0fs): %d mutants in %.0fs over all runs (%.1f per minute); "
                  "reports: %s/mutation.{json,html}\n",
                  judged, wall_seconds_, wall_seconds_ > 0 ? judged * 60.0 / wall_seconds_ : 0.0,
                  resumed_, earlier_runs_, earlier_seconds_, ran, total,
                  total > 0 ? ran * 60.0 / total : 0.0, dir.c_str());
    } else {
      std::printf("%d mutants in %.0fs (%.1f per minute); reports: %s/mutation.{json,html}\n", ran,
                  wall_seconds_, wall_seconds_ > 0 ? ran * 60.0 / wall_seconds_ : 0.0, dir.c_str());
    }
    std::fflush(stdout);
    if (journal_ != nullptr && !journal_->error().empty()) {
      Say(absl::StrCat(journal_->error(), "; --resume would judge the unrecorded mutants again"));
    }
    if (!w1.ok() || !w2.ok() || !w3.ok()) {
      Say("could not write the reports");
      return kExitInternal;
    }
    if (shared_.fatal) {
      Say(shared_.fatal_message);
      return kExitInternal;
    }
    if (Stopping()) {
      if (journal_ != nullptr) {
        Say(absl::StrFormat("%d verdicts are kept in %s; the same command with --resume judges "
                            "only the rest",
                            ran - static_cast<int>(std::count_if(
                                      selected_.begin(), selected_.end(), [](const Mutant& m) {
                                        return m.status == MutantStatus::kIgnored;
                                      })),
                            journal_->path()));
      }
      return Interrupted();
    }
    return kContinue;
  }

  int Verdict() const {
    Score cur = ScoreOf(selected_, true);
    if (cur.survived + cur.no_coverage + cur.compile_error > 0) {
      Say("curated mutants were not killed (survived, not covered, or unviable: see above); a "
          "boundary test has lost its teeth, or a catalog entry needs fixing");
      return kExitSurvivors;
    }
    if (cur.runtime_error > 0) {
      Say("Bazel failed on curated mutants; nothing was proven (see the logs named above)");
      return kExitInternal;
    }
    Score gen = ScoreOf(selected_, false);
    if (gen.valid() > 0 && gen.percent() < catalog_.thresholds.break_at) {
      Say(absl::StrFormat("generated score %.1f%% is below the break threshold %d%%",
                          gen.percent(), catalog_.thresholds.break_at));
      return kExitLowScore;
    }
    return kExitOk;
  }

  const Options& o_;
  const std::atomic<int>* stop_;
  std::string tmp_;
  std::vector<std::string> files_;
  std::set<std::string> file_set_;
  Catalog catalog_;
  std::vector<Mutant> mutants_;   // everything loaded or generated
  std::vector<Mutant> selected_;  // what this run covers
  int curated_count_ = 0;
  std::map<std::string, std::string> sources_;  // original content of each mutated file
  int lock_fd_ = -1;
  std::vector<Worker> workers_;
  std::vector<std::string> targets_;  // every test target a classic mutant needs
  std::vector<Mutant*> classic_;      // run one Bazel build and test each
  std::vector<Mutant*> switched_;     // generated, for the schemata engine
  Shared shared_;
  double wall_seconds_ = 0;
  std::unique_ptr<Journal> journal_;
  int resumed_ = 0;             // verdicts taken from the journal (--resume)
  int earlier_runs_ = 0;        // the runs that wrote them, and their wall time
  double earlier_seconds_ = 0;
};

}  // namespace

int RunMutation(const Options& options, const std::atomic<int>* stop) {
  return Session(options, stop).Run();
}

}  // namespace mutation

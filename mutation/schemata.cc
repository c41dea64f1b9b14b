#include "mutation/schemata.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mutation/engine.h"
#include "mutation/process.h"
#include "mutation/schema.h"

extern char** environ;

namespace mutation {

std::string WorkspaceName(const std::string& text) {
  std::size_t at = text.find("workspace(");
  while (at != std::string::npos) {
    std::size_t name = text.find("name", at);
    std::size_t close = text.find(')', at);
    if (name != std::string::npos && name < close) {
      std::size_t q1 = text.find('"', name);
      std::size_t q2 = q1 == std::string::npos ? q1 : text.find('"', q1 + 1);
      if (q2 != std::string::npos && q2 < close) return text.substr(q1 + 1, q2 - q1 - 1);
    }
    at = text.find("workspace(", at + 1);
  }
  return "__main__";
}

std::vector<std::string> ParseGtestList(const std::string& output) {
  std::vector<std::string> out;
  std::string suite;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (line.empty()) continue;
    absl::string_view name = line;
    std::size_t hash = name.find("  #");  // "  Case  # GetParam() = 3"
    if (hash != absl::string_view::npos) name = name.substr(0, hash);
    if (line[0] != ' ') {
      if (!absl::EndsWith(absl::StripTrailingAsciiWhitespace(name), ".")) {
        suite.clear();  // not a suite line (e.g. a banner printed by the binary)
        continue;
      }
      suite = std::string(absl::StripTrailingAsciiWhitespace(name));
      continue;
    }
    name = absl::StripAsciiWhitespace(name);
    if (suite.empty() || name.empty()) continue;
    std::string full = absl::StrCat(suite, name);
    if (absl::StrContains(full, "DISABLED_")) continue;
    out.push_back(std::move(full));
  }
  return out;
}

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Say(const std::string& s) { std::fprintf(stderr, "mutation: %s\n", s.c_str()); }

struct TestTarget {
  std::string label;
  std::string kind;
  std::string executable;
  std::string runfiles;  // <executable>.runfiles
  std::vector<std::string> args;  // the target's `args`, expanded
  bool gtest = false;
};

// One unit of the coverage run: a gtest case, or a whole non-gtest target.
struct Unit {
  std::size_t target = 0;
  std::string test_case;  // empty: the whole target
  double seconds = 0;
  std::vector<unsigned char> hits;
};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Runs fn(i) for i in [0, n) on `jobs` threads until done or stopped.
void ParallelFor(std::size_t n, int jobs, const std::atomic<int>* stop,
                 const std::function<void(std::size_t, int)>& fn) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, jobs); ++j) {
    threads.emplace_back([&, j] {
      while (stop->load() == 0) {
        std::size_t i = next++;
        if (i >= n) break;
        fn(i, j);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

class Engine {
 public:
  Engine(const SchemataConfig& c, std::vector<Mutant*>& mutants, const std::atomic<int>* stop,
         std::string* message)
      : c_(c), mutants_(mutants), stop_(stop), message_(message) {}

  int Run() {
    if (mutants_.empty()) return 0;
    if (absl::Status s = MakeDirs(c_.work_dir + "/cov"); !s.ok()) return Fail(s.message());
    if (absl::Status s = MakeDirs(c_.work_dir + "/tmp"); !s.ok()) return Fail(s.message());
    if (absl::Status s = MakeDirs(c_.work_dir + "/logs"); !s.ok()) return Fail(s.message());
    int rc = 0;
    for (int (Engine::*step)() :
         {&Engine::Compile, &Engine::Discover, &Engine::Coverage, &Engine::RunSwitched,
          &Engine::RunFallback}) {
      rc = (this->*step)();
      if (rc != 0) break;
    }
    RestoreAll();
    if (rc == 0 && stop_->load() != 0) rc = 128 + stop_->load();
    return rc;
  }

 private:
  int Fail(absl::string_view why, int code = kExitInternal) {
    *message_ = std::string(why);
    return code;
  }
  int Interrupted() const { return 128 + stop_->load(); }

  // Writes every file's schema and builds, dropping the sites the compiler refuses, until the
  // build passes. Each round builds with --keep_going, so it sees every file's errors at once.
  int Compile() {
    int next_id = 1;
    for (std::size_t i = 0; i < mutants_.size(); ++i) {
      Mutant* m = mutants_[i];
      files_[m->file].push_back(i);
      ids_.push_back(next_id++);
      for (const std::string& t : m->covered_by) targets_.insert(t);
    }
    max_id_ = next_id;
    if (targets_.empty()) {
      for (Mutant* m : mutants_) {
        m->status = MutantStatus::kNoCoverage;
        m->status_reason = absl::StrCat("no test target depends on ", m->file);
        Done(*m);
      }
      return 0;
    }
    std::map<std::string, std::set<int>> excluded;
    std::vector<std::string> targets(targets_.begin(), targets_.end());
    // Warnings stay warnings in the mutated files: -Werror would turn a switch's harmless
    // side effects (a "noreturn function does return" when a deleted _exit() is one branch, a
    // comparison always true for an unsigned) into errors no single line explains. The same
    // flag applies to every later build of this phase, fallbacks included.
    std::string regexes;
    for (const auto& [file, indices] : files_) {
      std::string re;
      for (char ch : file) {
        if (std::strchr(".+*?()[]{}^$|\\", ch) != nullptr) re += '\\';
        re += ch;
      }
      absl::StrAppend(&regexes, regexes.empty() ? "" : ",", re, "$");
    }
    c_.bazel->AddBuildArg(absl::StrCat("--per_file_copt=", regexes, "@-Wno-error"));
    for (int round = 1;; ++round) {
      int switched = 0;
      int next_probe = max_id_;
      for (const auto& [file, indices] : files_) {
        std::vector<Mutant> ms;
        std::vector<int> ids;
        for (std::size_t i : indices) {
          ms.push_back(*mutants_[i]);
          ids.push_back(ids_[i]);
        }
        Schema s = BuildSchema(file, c_.sources->at(file), ms, ids, excluded[file], next_probe);
        next_probe += static_cast<int>(s.probes.size());
        probes_[file] = s.probes;
        schema_text_[file] = s.embedded.empty() ? c_.sources->at(file) : s.text;
        for (std::size_t k : s.embedded) switched_.insert(indices[k]);
        for (const auto& [k, why] : s.fallback) {
          switched_.erase(indices[k]);
          fallback_reason_[indices[k]] = why;
        }
        switched += static_cast<int>(s.embedded.size());
        if (absl::Status w = c_.scratch->WriteMutant(file, schema_text_[file]); !w.ok()) {
          return Fail(w.message());
        }
      }
      map_size_ = next_probe;
      Say(absl::StrFormat("schemata round %d: %d of %zu mutants switched at run time in %zu "
                          "files; building %zu test targets",
                          round, switched, mutants_.size(), files_.size(), targets.size()));
      absl::StatusOr<CommandResult> b = c_.bazel->BuildKeepGoing(
          targets, c_.build_timeout, stop_, absl::StrCat("schemata-", round));
      if (!b.ok()) return Fail(b.status().message());
      if (b->outcome == Outcome::kInterrupted) return Interrupted();
      if (b->outcome == Outcome::kPassed) return 0;
      if (b->outcome != Outcome::kBuildFailed || round >= 8) {
        return Fail(absl::StrCat("the schema build failed (exit ", b->exit_code, "); see ",
                                 b->log_path));
      }
      // Map the errors back to lines; a line with a site the compiler names loses its switches.
      bool progress = false;
      for (const auto& [file, indices] : files_) {
        std::set<int> blamed = BlamedLines(b->output, file);
        if (round >= 3) {
          // Still failing: some errors surface one line per round (a constant evaluation stops
          // at its first switch). Take the switches out of the whole function around each.
          std::set<int> wide = blamed;
          for (int line : blamed) {
            for (const FunctionProbe& p : probes_[file]) {
              if (p.first_line <= line && line <= p.last_line) {
                for (int l = p.first_line; l <= p.last_line; ++l) wide.insert(l);
              }
            }
          }
          blamed = std::move(wide);
        }
        for (std::size_t i : indices) {
          if (switched_.count(i) != 0 && blamed.count(mutants_[i]->line) != 0 &&
              excluded[file].insert(mutants_[i]->line).second) {
            progress = true;
          }
        }
      }
      if (!progress || round >= 5) {
        // Errors we cannot pin on a line, or that keep coming: take every switch out of the files
        // the errors name, so the rounds end.
        for (const auto& [file, indices] : files_) {
          if (!absl::StrContains(b->output, absl::StrCat(file, ":")) ||
              !absl::StrContains(b->output, absl::StrCat("Compiling ", file, " failed"))) {
            continue;
          }
          for (std::size_t i : indices) {
            if (excluded[file].insert(mutants_[i]->line).second) progress = true;
          }
        }
      }
      if (!progress) {
        return Fail(absl::StrCat("the schema build fails in a way no mutated line explains; see ",
                                 b->log_path));
      }
    }
  }

  // The test binaries of the covering targets, straight from bazel-bin, and their gtest cases.
  int Discover() {
    if (targets_.empty()) return 0;
    absl::StatusOr<std::string> bin = c_.bazel->Info("bazel-bin", stop_);
    if (!bin.ok()) return Fail(bin.status().message());
    absl::StatusOr<std::vector<std::pair<std::string, std::string>>> kinds =
        c_.bazel->RuleKinds(std::vector<std::string>(targets_.begin(), targets_.end()), stop_);
    if (!kinds.ok()) return Fail(kinds.status().message());
    absl::StatusOr<std::map<std::string, std::vector<std::string>>> args =
        c_.bazel->TestArgs(std::vector<std::string>(targets_.begin(), targets_.end()), stop_);
    if (!args.ok()) return Fail(args.status().message());
    absl::StatusOr<std::string> ws = ReadFile(c_.scratch->tree() + "/WORKSPACE");
    workspace_ = WorkspaceName(ws.ok() ? *ws : "");
    for (const auto& [label, kind] : *kinds) {
      TestTarget t;
      t.label = label;
      t.kind = kind;
      std::string rel = label.substr(2);  // //pkg:name -> pkg/name
      std::replace(rel.begin(), rel.end(), ':', '/');
      t.executable = absl::StrCat(*bin, "/", rel);
      t.runfiles = t.executable + ".runfiles";
      t.gtest = kind == "cc_test";
      if (auto it = args->find(label); it != args->end()) t.args = it->second;
      if (!Exists(t.executable)) return Fail(absl::StrCat(label, ": no test binary at ", t.executable));
      target_index_[label] = tests_.size();
      tests_.push_back(std::move(t));
    }
    for (std::size_t ti = 0; ti < tests_.size(); ++ti) {
      const TestTarget& t = tests_[ti];
      if (!t.gtest) {
        units_.push_back({ti, "", 0, {}});
        continue;
      }
      std::string log = absl::StrCat(c_.work_dir, "/logs/list-", ti, ".log");
      absl::StatusOr<ProcessResult> r = RunTest(t, {"--gtest_list_tests"}, 0, "", 120, log);
      if (!r.ok()) return Fail(r.status().message());
      if (r->interrupted) return Interrupted();
      absl::StatusOr<std::string> out = ReadFile(log);
      std::vector<std::string> cases = ParseGtestList(out.ok() ? *out : "");
      if (r->exit_code != 0 || cases.empty()) {
        // Not a gtest binary after all (a cc_test with its own main): one unit, the whole test.
        tests_[ti].gtest = false;
        units_.push_back({ti, "", 0, {}});
        continue;
      }
      for (std::string& name : cases) units_.push_back({ti, std::move(name), 0, {}});
    }
    Say(absl::StrFormat("schemata: %zu test targets, %zu units (gtest cases or whole targets)",
                        tests_.size(), units_.size()));
    return 0;
  }

  // Every unit once with no switch on and a coverage map: it must pass (the baseline), its time
  // sets its timeout, and its map says which switches it reaches.
  int Coverage() {
    if (units_.empty()) return 0;
    double t0 = Now();
    std::mutex mu;
    std::vector<std::string> failures;
    ParallelFor(units_.size(), c_.test_jobs, stop_, [&](std::size_t u, int) {
      Unit& unit = units_[u];
      std::string map = absl::StrCat(c_.work_dir, "/cov/", u, ".map");
      int fd = open(map.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      bool sized = fd >= 0 && ftruncate(fd, map_size_ + 1) == 0;
      if (fd >= 0) close(fd);
      std::string log = absl::StrCat(c_.work_dir, "/logs/coverage-", u, ".log");
      std::vector<std::string> args;
      if (!unit.test_case.empty()) args.push_back("--gtest_filter=" + unit.test_case);
      absl::StatusOr<ProcessResult> r =
          sized ? RunTest(tests_[unit.target], args, 0, map, 900, log)
                : absl::StatusOr<ProcessResult>(absl::InternalError("cannot create " + map));
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok() || r->interrupted) {
        if (!r.ok()) failures.push_back(std::string(r.status().message()));
        return;
      }
      if (r->exit_code != 0 || r->term_signal != 0 || r->timed_out) {
        failures.push_back(absl::StrCat(Name(unit), " (see ", log, ")"));
        return;
      }
      unit.seconds = r->seconds;
      absl::StatusOr<std::string> bytes = ReadFile(map);
      if (bytes.ok()) unit.hits.assign(bytes->begin(), bytes->end());
      unlink(map.c_str());
    });
    if (stop_->load() != 0) return Interrupted();
    if (!failures.empty()) {
      std::sort(failures.begin(), failures.end());
      return Fail(absl::StrCat("the unmutated schema build fails ", failures.size(),
                               " test(s) run outside Bazel: ", absl::StrJoin(failures, "; ")),
                  kExitBaseline);
    }
    double total = 0;
    for (const Unit& u : units_) total += u.seconds;
    Say(absl::StrFormat("schemata baseline: %zu units pass (%.1fs of tests, %.1fs wall)",
                        units_.size(), total, Now() - t0));
    return 0;
  }

  // Each switched mutant: its covering units, grouped by target, fastest target first; the first
  // failing target kills it.
  int RunSwitched() {
    std::vector<std::size_t> order(switched_.begin(), switched_.end());
    ParallelFor(order.size(), c_.test_jobs, stop_, [&](std::size_t k, int job) {
      std::size_t i = order[k];
      Mutant* m = mutants_[i];
      double start = Now();
      std::map<std::size_t, std::pair<double, std::vector<std::string>>> by_target;
      for (const Unit& u : units_) {
        int id = ids_[i];
        if (static_cast<std::size_t>(id) < u.hits.size() && u.hits[id] != 0) {
          auto& entry = by_target[u.target];
          entry.first += u.seconds;
          if (!u.test_case.empty()) entry.second.push_back(u.test_case);
        }
      }
      if (by_target.empty()) {
        m->status = MutantStatus::kNoCoverage;
        m->status_reason = "no test reaches this line (schemata coverage run)";
        m->seconds = Now() - start;
        Done(*m);
        return;
      }
      std::vector<std::pair<double, std::size_t>> runs;
      for (const auto& [ti, entry] : by_target) runs.push_back({entry.first, ti});
      std::sort(runs.begin(), runs.end());
      Judge(m, runs, by_target, ids_[i], job);
      m->seconds = Now() - start;
      Done(*m);
    });
    return stop_->load() != 0 ? Interrupted() : 0;
  }

  // Mutants the schema could not switch: one build each, on top of the schema build.
  int RunFallback() {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < mutants_.size(); ++i) {
      if (switched_.count(i) == 0 && mutants_[i]->status == MutantStatus::kPending) {
        order.push_back(i);
      }
    }
    if (order.empty()) return 0;
    Say(absl::StrFormat("schemata: %zu mutants need a build of their own", order.size()));
    for (std::size_t i : order) {
      if (stop_->load() != 0) return Interrupted();
      Mutant* m = mutants_[i];
      double start = Now();
      RunOneFallback(m);
      if (m->status_reason.empty()) {
        m->status_reason = absl::StrCat("built on its own: ", fallback_reason_[i]);
      }
      m->seconds = Now() - start;
      if (absl::Status s = c_.scratch->WriteMutant(m->file, schema_text_[m->file]); !s.ok()) {
        return Fail(absl::StrCat("cannot restore the scratch copy: ", s.message()));
      }
      if (m->status != MutantStatus::kPending) Done(*m);
    }
    return stop_->load() != 0 ? Interrupted() : 0;
  }

  // The probe id of the innermost function around `line` of `file`, 0 when none.
  int EnclosingProbe(const std::string& file, int line) const {
    auto it = probes_.find(file);
    if (it == probes_.end()) return 0;
    const FunctionProbe* best = nullptr;
    for (const FunctionProbe& p : it->second) {
      if (p.first_line <= line && line <= p.last_line &&
          (best == nullptr || p.first_line > best->first_line)) {
        best = &p;
      }
    }
    return best == nullptr ? 0 : best->id;
  }

  void RunOneFallback(Mutant* m) {
    const std::string& original = c_.sources->at(m->file);
    const int probe = EnclosingProbe(m->file, m->line);
    if (probe != 0 && std::none_of(units_.begin(), units_.end(), [&](const Unit& u) {
          return static_cast<std::size_t>(probe) < u.hits.size() && u.hits[probe] != 0;
        })) {
      m->status = MutantStatus::kNoCoverage;
      m->status_reason = "no test enters the function around this line (schemata coverage run)";
      return;
    }
    // Build only the targets that will run.
    std::vector<std::string> needed;
    for (const Unit& u : units_) {
      const std::string& label = tests_[u.target].label;
      bool covers = probe == 0 ? std::find(m->covered_by.begin(), m->covered_by.end(), label) !=
                                     m->covered_by.end()
                               : static_cast<std::size_t>(probe) < u.hits.size() &&
                                     u.hits[probe] != 0;
      if (covers && std::find(needed.begin(), needed.end(), label) == needed.end()) {
        needed.push_back(label);
      }
    }
    std::string mutated;
    if (!ApplyMutant(*m, original, &mutated)) {
      m->status = MutantStatus::kRuntimeError;
      m->status_reason = "applying the mutation did not change the file";
      return;
    }
    if (absl::Status s = c_.scratch->WriteMutant(m->file, mutated); !s.ok()) {
      m->status = MutantStatus::kRuntimeError;
      m->status_reason = std::string(s.message());
      return;
    }
    if (needed.empty()) {
      m->status = MutantStatus::kNoCoverage;
      m->status_reason = "no test of the schemata coverage run can reach this line";
      return;
    }
    absl::StatusOr<CommandResult> b = c_.bazel->Build(needed, c_.build_timeout, stop_, m->id);
    if (!b.ok()) {
      m->status = MutantStatus::kRuntimeError;
      m->status_reason = std::string(b.status().message());
      return;
    }
    if (b->outcome == Outcome::kInterrupted) return;
    if (b->outcome == Outcome::kBuildFailed) {
      m->status = MutantStatus::kCompileError;
      for (absl::string_view line : absl::StrSplit(b->output, '\n')) {
        if (absl::StrContains(line, ": error:")) {
          m->status_reason = std::string(line.substr(0, 300));
          break;
        }
      }
      return;
    }
    if (b->outcome != Outcome::kPassed) {
      m->status = MutantStatus::kRuntimeError;
      m->status_reason = absl::StrCat("bazel build exited ", b->exit_code, "; see ", b->log_path);
      return;
    }
    // No switch shows which cases reach the line; the probe of the enclosing function shows
    // which enter it (a superset). Outside any function: every unit of the covering targets.
    std::map<std::size_t, std::pair<double, std::vector<std::string>>> by_target;
    for (const Unit& u : units_) {
      bool covers = probe == 0 ? std::find(m->covered_by.begin(), m->covered_by.end(),
                                           tests_[u.target].label) != m->covered_by.end()
                               : static_cast<std::size_t>(probe) < u.hits.size() &&
                                     u.hits[probe] != 0;
      if (!covers) continue;
      auto& entry = by_target[u.target];
      entry.first += u.seconds;
      if (probe != 0 && !u.test_case.empty()) entry.second.push_back(u.test_case);
    }
    std::vector<std::pair<double, std::size_t>> runs;
    for (const auto& [ti, entry] : by_target) runs.push_back({entry.first, ti});
    std::sort(runs.begin(), runs.end());
    Judge(m, runs, by_target, 0, 0);
  }

  // Runs the targets in order; the first failure kills the mutant.
  void Judge(Mutant* m, const std::vector<std::pair<double, std::size_t>>& runs,
             const std::map<std::size_t, std::pair<double, std::vector<std::string>>>& by_target,
             int active, int job) {
    m->covered_by.clear();
    for (const auto& [seconds, ti] : runs) {
      const TestTarget& t = tests_[ti];
      m->covered_by.push_back(t.label);
      std::vector<std::string> args;
      const std::vector<std::string>& cases = by_target.at(ti).second;
      if (t.gtest) {
        args.push_back("--gtest_fail_fast");
        if (!cases.empty()) args.push_back("--gtest_filter=" + absl::StrJoin(cases, ":"));
      }
      double timeout = c_.timeout_factor * seconds + c_.timeout_extra;
      std::string log = absl::StrCat(c_.work_dir, "/logs/job-", job, ".log");
      absl::StatusOr<ProcessResult> r = RunTest(t, args, active, "", timeout, log);
      if (!r.ok()) {
        m->status = MutantStatus::kRuntimeError;
        m->status_reason = std::string(r.status().message());
        return;
      }
      if (r->interrupted) {
        m->status = MutantStatus::kPending;
        return;
      }
      if (r->timed_out) {
        m->status = MutantStatus::kTimeout;
        m->killed_by = {t.label};
        m->status_reason = absl::StrFormat("%s ran past %.0fs", t.label, timeout);
        return;
      }
      if (r->exit_code != 0 || r->term_signal != 0) {
        m->status = MutantStatus::kKilled;
        m->killed_by = {t.label};
        absl::StatusOr<std::string> out = ReadFile(log);
        std::vector<std::string> failed = FailedCases(out.ok() ? *out : "");
        m->status_reason =
            failed.empty()
                ? (r->term_signal != 0 ? absl::StrCat("signal ", r->term_signal)
                                       : absl::StrCat("exit ", r->exit_code))
                : absl::StrCat("failed: ", absl::StrJoin(failed, ", "));
        return;
      }
    }
    m->status = MutantStatus::kSurvived;
  }

  // One test process as Bazel would start it: cwd and TEST_SRCDIR in its runfiles, a fresh
  // TEST_TMPDIR, the switch and coverage map in the environment.
  absl::StatusOr<ProcessResult> RunTest(const TestTarget& t, const std::vector<std::string>& args,
                                        int active, const std::string& coverage, double timeout,
                                        const std::string& log) {
    std::string tmp;
    {
      std::lock_guard<std::mutex> lock(tmp_mu_);
      tmp = absl::StrCat(c_.work_dir, "/tmp/", tmp_counter_++);
    }
    if (absl::Status s = MakeDirs(tmp); !s.ok()) return s;
    ProcessSpec spec;
    spec.argv.push_back(t.executable);
    spec.argv.insert(spec.argv.end(), t.args.begin(), t.args.end());
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = absl::StrCat(t.runfiles, "/", workspace_);
    spec.stdout_path = log;
    spec.timeout_seconds = timeout;
    spec.grace_seconds = 2;
    spec.replace_env = true;
    for (char** e = environ; *e != nullptr; ++e) {
      absl::string_view kv(*e);
      if (absl::StartsWith(kv, "TEST_") || absl::StartsWith(kv, "RUNFILES_") ||
          absl::StartsWith(kv, "BUILD_WORK") || absl::StartsWith(kv, "GTEST_") ||
          absl::StartsWith(kv, "XML_OUTPUT_FILE=") || absl::StartsWith(kv, "MUTATION_") ||
          absl::StartsWith(kv, "JAVA_RUNFILES=") || absl::StartsWith(kv, "PYTHON_RUNFILES=")) {
        continue;
      }
      spec.env.emplace_back(kv);
    }
    spec.env.push_back("TEST_SRCDIR=" + t.runfiles);
    spec.env.push_back("RUNFILES_DIR=" + t.runfiles);
    spec.env.push_back("TEST_WORKSPACE=" + workspace_);
    spec.env.push_back("TEST_TMPDIR=" + tmp);
    spec.env.push_back("TEST_TARGET=" + t.label);
    if (active > 0) spec.env.push_back(absl::StrCat(kActiveEnv, "=", active));
    if (!coverage.empty()) spec.env.push_back(absl::StrCat(kCoverageEnv, "=", coverage));
    absl::StatusOr<ProcessResult> r = RunProcess(spec, stop_);
    ProcessSpec rm;
    rm.argv = {"rm", "-rf", tmp};
    rm.stdout_path = "/dev/null";
    RunProcess(rm, nullptr).IgnoreError();
    return r;
  }

  std::string Name(const Unit& u) const {
    return u.test_case.empty() ? tests_[u.target].label
                               : absl::StrCat(tests_[u.target].label, " ", u.test_case);
  }

  void Done(const Mutant& m) {
    std::lock_guard<std::mutex> lock(done_mu_);
    if (c_.on_done) c_.on_done(m);
  }

  void RestoreAll() {
    for (const auto& [file, indices] : files_) {
      c_.scratch->Restore(file, c_.sources->at(file)).IgnoreError();
    }
  }

  const SchemataConfig& c_;
  std::vector<Mutant*>& mutants_;
  const std::atomic<int>* stop_;
  std::string* message_;
  std::map<std::string, std::vector<std::size_t>> files_;  // file -> mutant indices
  std::vector<int> ids_;                                    // switch id of each mutant
  int max_id_ = 0;
  std::set<std::string> targets_;
  std::set<std::size_t> switched_;
  std::map<std::size_t, std::string> fallback_reason_;
  std::map<std::string, std::string> schema_text_;
  std::map<std::string, std::vector<FunctionProbe>> probes_;
  int map_size_ = 0;  // switch and probe ids are below this
  std::string workspace_;
  std::vector<TestTarget> tests_;
  std::map<std::string, std::size_t> target_index_;
  std::vector<Unit> units_;
  std::mutex tmp_mu_, done_mu_;
  int tmp_counter_ = 0;
};

}  // namespace

int RunSchemata(const SchemataConfig& config, std::vector<Mutant*>& mutants,
                const std::atomic<int>* stop, std::string* message) {
  return Engine(config, mutants, stop, message).Run();
}

}  // namespace mutation

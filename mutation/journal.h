// The verdict journal: every judged mutant is appended, one JSON line, to a file named after the
// exact tree and settings that judged it. A run that stops early (Ctrl-C, a machine or session
// that ends, SIGKILL) keeps what it judged; `--resume` then skips those mutants and runs only the
// rest. A verdict is reused only for the same content of every checkout file and the same
// verdict-affecting settings, so a journal can never carry a verdict across a change.
#ifndef MUTATION_JOURNAL_H_
#define MUTATION_JOURNAL_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mutation/mutant.h"

namespace mutation {

// A stable 64-bit FNV-1a over each (path, content) pair in order and then `settings`, as 16 hex
// digits. `read` returns a file's content; an error is passed back (no key without every file).
absl::StatusOr<std::string> TreeKey(
    const std::vector<std::string>& paths,
    const std::function<absl::StatusOr<std::string>(const std::string&)>& read,
    const std::string& settings);

// What an earlier run of the same key recorded.
struct JournalState {
  std::map<std::string, Mutant> verdicts;  // by mutant id: status, reason, killed_by, covered_by, seconds
  int runs = 0;                            // earlier runs that recorded their end
  double seconds = 0;                      // their wall time, summed
  int torn_lines = 0;                      // lines that did not parse (a run killed mid-write)
};

// Parses journal text. Unknown statuses and lines that are not JSON objects count as torn; a
// Pending or RuntimeError verdict is never kept (it says nothing about the mutant).
JournalState ParseJournal(const std::string& text);

// The verdict fields of `from` copied onto `to` (the mutant of this run with the same id).
void ApplyVerdict(const Mutant& from, Mutant* to);

class Journal {
 public:
  // Opens `path` for appending. With `keep` the existing lines stay (a resumed run); without, the
  // file starts empty.
  static absl::StatusOr<std::unique_ptr<Journal>> Open(const std::string& path, bool keep);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends m's verdict; thread-safe. Pending and RuntimeError are not recorded. A failed write is
  // remembered (error()) and the run goes on: the journal only saves time, it judges nothing.
  void Record(const Mutant& m);
  // Appends the end of a run: how many mutants it judged and its wall time.
  void RecordRun(int judged, double seconds);
  const std::string& path() const { return path_; }
  std::string error() const;

 private:
  Journal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void Append(const std::string& line);

  std::string path_;
  int fd_;
  mutable std::mutex mu_;
  std::string error_;
};

}  // namespace mutation

#endif  // MUTATION_JOURNAL_H_

#include "mutation/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace mutation {
namespace {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

void Mix(std::uint64_t* h, const std::string& bytes) {
  for (unsigned char c : bytes) {
    *h ^= c;
    *h *= kFnvPrime;
  }
  // The length closes each field, so ("ab", "c") and ("a", "bc") differ.
  std::uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) {
    *h ^= (n >> (8 * i)) & 0xff;
    *h *= kFnvPrime;
  }
}

bool ParseStatus(const std::string& name, MutantStatus* out) {
  for (MutantStatus s : {MutantStatus::kKilled, MutantStatus::kSurvived, MutantStatus::kTimeout,
                         MutantStatus::kCompileError, MutantStatus::kNoCoverage,
                         MutantStatus::kIgnored}) {
    if (name == StatusName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

bool Strings(const nlohmann::json& j, const char* key, std::vector<std::string>* out) {
  if (!j.contains(key)) return true;
  const nlohmann::json& a = j[key];
  if (!a.is_array()) return false;
  for (const nlohmann::json& e : a) {
    if (!e.is_string()) return false;
    out->push_back(e.get<std::string>());
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> TreeKey(
    const std::vector<std::string>& paths,
    const std::function<absl::StatusOr<std::string>(const std::string&)>& read,
    const std::string& settings) {
  std::uint64_t h = kFnvOffset;
  for (const std::string& p : paths) {
    absl::StatusOr<std::string> text = read(p);
    if (!text.ok()) return text.status();
    Mix(&h, p);
    Mix(&h, *text);
  }
  Mix(&h, settings);
  return absl::StrFormat("%016x", h);
}

JournalState ParseJournal(const std::string& text) {
  JournalState state;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      ++state.torn_lines;
      continue;
    }
    if (j.contains("run_seconds")) {
      if (!j["run_seconds"].is_number()) {
        ++state.torn_lines;
        continue;
      }
      ++state.runs;
      state.seconds += j["run_seconds"].get<double>();
      continue;
    }
    Mutant m;
    bool ok = j.contains("id") && j["id"].is_string() && j.contains("status") &&
              j["status"].is_string();
    if (ok) {
      m.id = j["id"].get<std::string>();
      std::string status = j["status"].get<std::string>();
      if (status == StatusName(MutantStatus::kPending) ||
          status == StatusName(MutantStatus::kRuntimeError)) {
        continue;  // never written by Record; a hand-edited line says nothing either
      }
      ok = ParseStatus(status, &m.status);
    }
    if (ok && j.contains("reason")) {
      ok = j["reason"].is_string();
      if (ok) m.status_reason = j["reason"].get<std::string>();
    }
    if (ok && j.contains("seconds")) {
      ok = j["seconds"].is_number();
      if (ok) m.seconds = j["seconds"].get<double>();
    }
    ok = ok && Strings(j, "killed_by", &m.killed_by) && Strings(j, "covered_by", &m.covered_by);
    if (!ok) {
      ++state.torn_lines;
      continue;
    }
    state.verdicts[m.id] = std::move(m);  // a later line of the same id wins
  }
  return state;
}

void ApplyVerdict(const Mutant& from, Mutant* to) {
  to->status = from.status;
  to->status_reason = from.status_reason;
  to->killed_by = from.killed_by;
  to->covered_by = from.covered_by;
  to->seconds = from.seconds;
}

absl::StatusOr<std::unique_ptr<Journal>> Journal::Open(const std::string& path, bool keep) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (keep ? 0 : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("journal ", path, ": ", std::strerror(errno)));
  }
  if (keep) {
    // A run killed mid-write leaves a line without its newline: end it, so the next verdict
    // starts a line of its own and only the torn one is lost.
    int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char last = '\n';
    if (rfd >= 0) {
      off_t size = ::lseek(rfd, 0, SEEK_END);
      if (size > 0 && ::pread(rfd, &last, 1, size - 1) != 1) last = '\n';
      ::close(rfd);
    }
    if (last != '\n' && ::write(fd, "\n", 1) != 1) {
      int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("journal ", path, ": ", std::strerror(err)));
    }
  }
  return std::unique_ptr<Journal>(new Journal(path, fd));
}

Journal::~Journal() { ::close(fd_); }

void Journal::Record(const Mutant& m) {
  if (m.status == MutantStatus::kPending || m.status == MutantStatus::kRuntimeError) return;
  nlohmann::json j = {{"id", m.id},
                      {"status", StatusName(m.status)},
                      {"reason", m.status_reason},
                      {"killed_by", m.killed_by},
                      {"covered_by", m.covered_by},
                      {"seconds", m.seconds}};
  Append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Journal::RecordRun(int judged, double seconds) {
  nlohmann::json j = {{"run_seconds", seconds}, {"judged", judged}};
  Append(j.dump());
}

std::string Journal::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void Journal::Append(const std::string& line) {
  std::string data = line + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  // One write(2) per line on an O_APPEND descriptor: a crash loses at most the line being written.
  ssize_t n = ::write(fd_, data.data(), data.size());
  if (n != static_cast<ssize_t>(data.size()) && error_.empty()) {
    error_ = absl::StrCat("journal ", path_, ": ",
                          n < 0 ? std::strerror(errno) : "short write (disk full?)");
  }
}

}  // namespace mutation

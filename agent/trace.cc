#include "agent/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sandbox/errors.h"

namespace agent {

absl::StatusOr<TraceWriter> TraceWriter::Open(const std::string& path, bool truncate) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return sandbox::ErrnoError(errno, absl::StrCat("open(", path, ")"));
  return TraceWriter(fd, path);
}

TraceWriter::TraceWriter(TraceWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

TraceWriter& TraceWriter::operator=(TraceWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

TraceWriter::~TraceWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status TraceWriter::Write(const std::string& type, const std::string& run_id,
                                nlohmann::json line) {
  if (fd_ < 0) return sandbox::MakeError(sandbox::ErrorCode::kEINTERNAL, "trace writer is closed");
  line["trace_version"] = kTraceVersion;
  line["type"] = type;
  line["run_id"] = run_id;
  std::string text =
      line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // O_APPEND: each write lands at the end even if another run appends to the same file. A short
  // write is continued; the line is complete or the error is reported.
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sandbox::ErrnoError(errno, absl::StrCat("write(", path_, ")"));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace agent

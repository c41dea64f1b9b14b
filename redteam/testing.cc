#include "redteam/testing.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sandbox/errors.h"

namespace redteam {

ScratchDir::ScratchDir(std::string_view prefix) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string templ = std::string(base != nullptr ? base : "/tmp") + "/" + std::string(prefix) +
                      ".XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) std::abort();  // Test set-up cannot continue without it.
  // The real path: the workspace judges real paths, so the cases compare against real paths too.
  path_ = std::filesystem::canonical(templ).string();
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::Join(std::string_view rel) const {
  return path_ + "/" + std::string(rel);
}

bool WriteFile(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string CodeName(const absl::Status& status) {
  if (status.ok()) return "OK";
  return std::string(sandbox::Info(sandbox::CodeOf(status)).name);
}

namespace {

// Fields of /proc/<pid>/stat after the command name: state is [0], pgrp is [2].
std::optional<std::vector<std::string>> StatFields(pid_t pid) {
  std::optional<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.has_value()) return std::nullopt;
  const size_t close_paren = stat->rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::istringstream rest(stat->substr(close_paren + 1));
  std::vector<std::string> fields;
  std::string field;
  while (rest >> field) fields.push_back(field);
  if (fields.size() < 3) return std::nullopt;
  return fields;
}

}  // namespace

bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) == -1 && errno == ESRCH) return true;
  std::optional<std::vector<std::string>> fields = StatFields(pid);
  return !fields.has_value() || (*fields)[0] == "Z" || (*fields)[0] == "X";
}

std::vector<pid_t> LiveProcessesInGroup(pid_t pgid) {
  std::vector<pid_t> members;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return members;
  while (struct dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;
    std::optional<std::vector<std::string>> fields = StatFields(static_cast<pid_t>(pid));
    if (!fields.has_value() || (*fields)[0] == "Z" || (*fields)[0] == "X") continue;
    if (std::atol((*fields)[2].c_str()) == pgid) members.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return members;
}

int CountOpenFds() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count - 1;  // The iterator's own descriptor.
}

std::vector<pid_t> ProcessesWithMarker(std::string_view marker) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (struct dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid == getpid()) continue;
    std::optional<std::string> cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
    if (!cmdline.has_value() || cmdline->find(marker) == std::string::npos) continue;
    if (ProcessGone(static_cast<pid_t>(pid))) continue;
    found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

int KillProcessesWithMarker(std::string_view marker) {
  int killed = 0;
  for (pid_t pid : ProcessesWithMarker(marker)) killed += kill(pid, SIGKILL) == 0 ? 1 : 0;
  return killed;
}

std::string UniqueMarker(std::string_view what) {
  static std::atomic<int> counter{0};
  return "redteam-" + std::string(what) + "-" + std::to_string(getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

std::optional<pid_t> AwaitPidFile(const std::string& path) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::optional<std::string> text = ReadFile(path);
    if (text.has_value() && !text->empty() && text->back() == '\n') {
      return static_cast<pid_t>(std::atol(text->c_str()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

}  // namespace redteam

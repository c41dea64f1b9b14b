#include "mutation/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mutation {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec, const std::atomic<int>* stop) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("RunProcess: empty argv");
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed (no allocation, no locks).
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int out_fd = open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open(", spec.stdout_path, ")"));
  int err_fd = out_fd;
  if (!spec.stderr_path.empty()) {
    err_fd = open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) {
      int saved = errno;
      close(out_fd);
      return absl::ErrnoToStatus(saved, absl::StrCat("open(", spec.stderr_path, ")"));
    }
  }
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  double start = Now();
  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    close(out_fd);
    if (err_fd != out_fd) close(err_fd);
    return absl::ErrnoToStatus(saved, "fork()");
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only from here to exec.
    setpgid(0, 0);
#ifdef __linux__
    // If the runner is SIGKILLed, its Bazel client dies with it (and the server cancels the
    // command) instead of running on against a scratch copy nobody restores.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (cwd != nullptr && chdir(cwd) != 0) _exit(127);
    if (spec.replace_env) {
      execve(argv[0], argv.data(), envp.data());
    } else {
      execvp(argv[0], argv.data());
    }
    _exit(127);
  }
  // Both sides set the group, so neither a fast exec nor a fast kill races the other.
  setpgid(pid, pid);
  close(out_fd);
  if (err_fd != out_fd) close(err_fd);

  ProcessResult result;
  double deadline = spec.timeout_seconds > 0 ? start + spec.timeout_seconds : 0;
  double kill_at = 0;  // when SIGKILL follows the SIGINT already sent
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return absl::ErrnoToStatus(errno, "waitpid()");
    double now = Now();
    if (kill_at == 0) {
      bool stopping = stop != nullptr && stop->load() != 0;
      bool late = deadline > 0 && now >= deadline;
      if (stopping || late) {
        result.interrupted = stopping;
        result.timed_out = !stopping;
        kill(-pid, SIGINT);
        kill_at = now + spec.grace_seconds;
      }
    } else if (now >= kill_at) {
      kill(-pid, SIGKILL);
      kill_at = now + 3600;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Whatever the child left running in its group goes with it.
  kill(-pid, SIGKILL);
  result.seconds = Now() - start;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  return result;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return errno == ENOENT ? absl::NotFoundError(absl::StrCat(path, ": no such file"))
                           : absl::ErrnoToStatus(errno, absl::StrCat("open(", path, ")"));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status WriteFileAtomic(const std::string& path, const std::string& content, int mode) {
  std::string tmp = absl::StrCat(path, ".mutation-tmp");
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open(", tmp, ")"));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      close(fd);
      unlink(tmp.c_str());
      return absl::ErrnoToStatus(saved, absl::StrCat("write(", tmp, ")"));
    }
    done += static_cast<std::size_t>(n);
  }
  fchmod(fd, mode);
  if (close(fd) != 0) return absl::ErrnoToStatus(errno, absl::StrCat("close(", tmp, ")"));
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(saved, absl::StrCat("rename(", tmp, ", ", path, ")"));
  }
  return absl::OkStatus();
}

}  // namespace mutation

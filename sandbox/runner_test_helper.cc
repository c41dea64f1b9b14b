// The child the runner tests start. Each subcommand reports one fact exactly:
//   fds                    the open fds, space separated ("0 1 2")
//   rlimit NAME            "soft:hard" of RLIMIT_NAME ("inf" for unlimited)
//   raise-hard NAME        drops root privileges, then tries to raise the hard limit by one;
//                          prints the errno name or "ok" (or "skip: why")
//   soft-above-hard NAME   tries soft = hard + 1; prints the errno name or "ok"
//   open-fds               opens /dev/null until it fails; prints "opened N ERRNO"
//   write-file PATH BYTES [ignore-xfsz]
//                          writes BYTES zero bytes to PATH; prints "wrote N ERRNO|ok"
//   spin                   burns CPU until killed
//   stdin-count            reads stdin to EOF; prints the byte count
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/capability.h>
#include <sys/syscall.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Named {
  const char* name;
  int value;
};

constexpr Named kResources[] = {
    {"CPU", RLIMIT_CPU},       {"FSIZE", RLIMIT_FSIZE}, {"NOFILE", RLIMIT_NOFILE},
    {"CORE", RLIMIT_CORE},     {"AS", RLIMIT_AS},       {"NPROC", RLIMIT_NPROC},
};

constexpr Named kErrnos[] = {{"EPERM", EPERM},   {"EINVAL", EINVAL}, {"EMFILE", EMFILE},
                             {"EFBIG", EFBIG},   {"ENFILE", ENFILE}, {"EACCES", EACCES}};

const char* ErrnoName(int err) {
  for (const Named& n : kErrnos) {
    if (n.value == err) return n.name;
  }
  return "other";
}

int Resource(const char* name) {
  for (const Named& n : kResources) {
    if (std::strcmp(n.name, name) == 0) return n.value;
  }
  std::fprintf(stderr, "unknown resource %s\n", name);
  std::exit(2);
}

std::string Show(rlim_t v) { return v == RLIM_INFINITY ? "inf" : std::to_string(v); }

int Fds() {
  const long max = sysconf(_SC_OPEN_MAX);
  std::string out;
  for (int fd = 0; fd < (max > 0 && max < 65536 ? max : 65536); ++fd) {
    if (fcntl(fd, F_GETFD) != -1) out += (out.empty() ? "" : " ") + std::to_string(fd);
  }
  std::printf("%s\n", out.c_str());
  return 0;
}

// Root (CAP_SYS_RESOURCE) may raise hard limits; the semantics under test are an unprivileged
// program's. Become nobody, or, where uid 65534 is not mapped (Bazel's sandbox runs tests in a user
// namespace that maps only root), drop every capability while staying uid 0.
bool DropPrivileges() {
  if (geteuid() != 0) return true;
  if (setgid(65534) == 0 && setuid(65534) == 0) return true;
#if defined(__linux__)
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  std::memset(data, 0, sizeof(data));
  if (syscall(SYS_capset, &header, data) == 0) return true;
#endif
  return false;
}

int RaiseHard(int resource) {
  if (!DropPrivileges()) {
    std::printf("skip: cannot drop root privileges: %s\n", std::strerror(errno));
    return 0;
  }
  struct rlimit limit;
  getrlimit(resource, &limit);
  limit.rlim_max += 1;
  std::printf("%s\n", setrlimit(resource, &limit) == 0 ? "ok" : ErrnoName(errno));
  return 0;
}

int SoftAboveHard(int resource) {
  struct rlimit limit;
  getrlimit(resource, &limit);
  limit.rlim_cur = limit.rlim_max + 1;
  std::printf("%s\n", setrlimit(resource, &limit) == 0 ? "ok" : ErrnoName(errno));
  return 0;
}

int OpenFds() {
  std::vector<int> fds;
  while (true) {
    const int fd = open("/dev/null", O_RDONLY);
    if (fd == -1) {
      const int err = errno;
      // Give the fds back before printing and exiting: stdio and sanitizer runtimes need some.
      for (int open_fd : fds) close(open_fd);
      std::printf("opened %zu %s\n", fds.size(), ErrnoName(err));
      return 0;
    }
    fds.push_back(fd);
  }
}

int WriteFile(const char* path, long long bytes, bool ignore_xfsz) {
  if (ignore_xfsz) signal(SIGXFSZ, SIG_IGN);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd == -1) return 3;
  static char block[4096];
  long long written = 0;
  while (written < bytes) {
    const long long want = bytes - written < 4096 ? bytes - written : 4096;
    const ssize_t n = write(fd, block, static_cast<size_t>(want));
    if (n == -1) {
      std::printf("wrote %lld %s\n", written, ErrnoName(errno));
      return 0;
    }
    written += n;
  }
  std::printf("wrote %lld ok\n", written);
  return 0;
}

int StdinCount() {
  char buf[65536];
  long long total = 0;
  ssize_t n;
  while ((n = read(0, buf, sizeof(buf))) > 0) total += n;
  std::printf("%lld\n", total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string cmd = argv[1];
  if (cmd == "fds") return Fds();
  if (cmd == "rlimit" && argc == 3) {
    struct rlimit limit;
    getrlimit(Resource(argv[2]), &limit);
    std::printf("%s:%s\n", Show(limit.rlim_cur).c_str(), Show(limit.rlim_max).c_str());
    return 0;
  }
  if (cmd == "raise-hard" && argc == 3) return RaiseHard(Resource(argv[2]));
  if (cmd == "soft-above-hard" && argc == 3) return SoftAboveHard(Resource(argv[2]));
  if (cmd == "open-fds") return OpenFds();
  if (cmd == "write-file" && argc >= 4) {
    return WriteFile(argv[2], std::atoll(argv[3]), argc == 5 && std::string(argv[4]) == "ignore-xfsz");
  }
  if (cmd == "spin") {
    volatile unsigned long spins = 0;
    while (true) spins = spins + 1;
  }
  if (cmd == "stdin-count") return StdinCount();
  return 2;
}

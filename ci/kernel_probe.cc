// kernel_probe: checks, on this machine, the Linux kernel features the sandbox's kernel layers rely
// on, by using them, independently of the sandbox code (ci/verify-linux.sh compares its findings
// with the sandbox CLI's `doctor`).
//
//   kernel_probe openat2    RESOLVE_BENEATH refuses `..` and absolute paths, RESOLVE_NO_SYMLINKS
//                           refuses a symlink, a plain path beneath opens
//   kernel_probe landlock   the ABI version, and a child restricted to writing beneath one directory
//                           can write there and is refused (EACCES) elsewhere
//   kernel_probe seccomp    a child with a filter returning EPERM for getppid gets EPERM
//
// Prints one line per fact. Exit status: 0 verified, 2 the kernel lacks the feature (the line says
// why), 1 the feature is there but behaves unexpectedly, 64 bad usage.
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace {

constexpr int kVerified = 0;
constexpr int kWrong = 1;
constexpr int kUnsupported = 2;

// Removes the probe's scratch directory tree (at most one level of entries, which is all we make).
void RemoveTree(const std::string& dir, std::initializer_list<const char*> entries) {
  for (const char* entry : entries) {
    std::string path = dir + "/" + entry;
    if (unlink(path.c_str()) != 0) rmdir(path.c_str());
  }
  rmdir(dir.c_str());
}

std::string MakeScratchDir() {
  const char* tmp = getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") +
                      "/kernel_probe.XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    fprintf(stderr, "kernel_probe: mkdtemp(%s): %s\n", templ.c_str(), strerror(errno));
    return "";
  }
  return templ;
}

// Returns the errno of openat2(dirfd, path, how), or 0 when it opened.
int OpenAt2Errno(int dirfd, const char* path, unsigned long long resolve) {
  struct open_how how;
  memset(&how, 0, sizeof(how));
  how.flags = O_RDONLY | O_CLOEXEC;
  how.resolve = resolve;
  long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
  if (fd < 0) return errno;
  close(static_cast<int>(fd));
  return 0;
}

int ProbeOpenat2() {
  std::string dir = MakeScratchDir();
  if (dir.empty()) return kWrong;
  std::string file = dir + "/inside";
  std::string link = dir + "/link";
  int fd = open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  if (fd < 0 || symlink("inside", link.c_str()) != 0) {
    fprintf(stderr, "kernel_probe: cannot set up %s: %s\n", dir.c_str(), strerror(errno));
    RemoveTree(dir, {"inside", "link"});
    return kWrong;
  }
  int dirfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct Case {
    const char* what;
    const char* path;
    unsigned long long resolve;
    int want_errno;
  };
  const Case cases[] = {
      {"a plain name beneath opens", "inside", RESOLVE_BENEATH, 0},
      {"RESOLVE_BENEATH refuses ../ (EXDEV)", "../", RESOLVE_BENEATH, EXDEV},
      {"RESOLVE_BENEATH refuses an absolute path (EXDEV)", "/etc/passwd", RESOLVE_BENEATH, EXDEV},
      {"RESOLVE_NO_SYMLINKS refuses a symlink, even one pointing inside (ELOOP)", "link",
       RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, ELOOP},
      {"RESOLVE_NO_MAGICLINKS refuses /proc/self/root (ELOOP)", "/proc/self/root/etc/passwd",
       RESOLVE_NO_MAGICLINKS, ELOOP},
  };
  int status = kVerified;
  for (const Case& c : cases) {
    int got = OpenAt2Errno(dirfd, c.path, c.resolve);
    if (got == ENOSYS) {
      printf("openat2: unsupported: the kernel has no openat2 (ENOSYS; needs Linux 5.6)\n");
      status = kUnsupported;
      break;
    }
    bool ok = got == c.want_errno;
    printf("openat2: %s %s: got %s\n", ok ? "ok" : "WRONG", c.what,
           got == 0 ? "opened" : strerrorname_np(got));
    if (!ok) status = kWrong;
  }
  close(dirfd);
  RemoveTree(dir, {"inside", "link"});
  return status;
}

int ProbeLandlock() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0) {
    if (errno == ENOSYS) {
      printf("landlock: unsupported: the kernel is built without Landlock (ENOSYS)\n");
    } else if (errno == EOPNOTSUPP) {
      printf("landlock: unsupported: built in but not enabled at boot (EOPNOTSUPP; add landlock to lsm=)\n");
    } else {
      printf("landlock: unsupported: landlock_create_ruleset: %s\n", strerrorname_np(errno));
    }
    return kUnsupported;
  }
  printf("landlock: ABI version %ld\n", abi);

  std::string dir = MakeScratchDir();
  if (dir.empty()) return kWrong;
  std::string allowed_dir = dir + "/allowed";
  std::string allowed_file = allowed_dir + "/file";
  std::string denied_file = dir + "/denied";
  if (mkdir(allowed_dir.c_str(), 0700) != 0) {
    fprintf(stderr, "kernel_probe: mkdir(%s): %s\n", allowed_dir.c_str(), strerror(errno));
    RemoveTree(dir, {});
    return kWrong;
  }
  int allowed_fd = open(allowed_dir.c_str(), O_PATH | O_CLOEXEC);

  pid_t pid = fork();
  if (pid == 0) {
    // Child: async-signal-safe calls only (raw syscalls, open, _exit); every string was built
    // before the fork. Exit codes: 0 allowed write ok and other write EACCES, 10+n a setup step n
    // failed, 20 the allowed write failed, 21 the other write succeeded, 22 it failed otherwise.
    struct landlock_ruleset_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_REG;
    int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0));
    if (ruleset < 0) _exit(11);
    struct landlock_path_beneath_attr beneath;
    memset(&beneath, 0, sizeof(beneath));
    beneath.allowed_access = attr.handled_access_fs;
    beneath.parent_fd = allowed_fd;
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) {
      _exit(12);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(13);
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) _exit(14);
    int fd = open(allowed_file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) _exit(20);
    close(fd);
    fd = open(denied_file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) _exit(21);
    _exit(errno == EACCES ? 0 : 22);
  }
  int wstatus = 0;
  if (pid < 0 || waitpid(pid, &wstatus, 0) != pid) {
    fprintf(stderr, "kernel_probe: fork/waitpid: %s\n", strerror(errno));
    close(allowed_fd);
    RemoveTree(dir + "/allowed", {"file"});
    RemoveTree(dir, {"denied"});
    return kWrong;
  }
  close(allowed_fd);
  RemoveTree(dir + "/allowed", {"file"});
  RemoveTree(dir, {"denied"});
  int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  switch (code) {
    case 0:
      printf("landlock: ok a restricted child writes beneath its allowed directory\n");
      printf("landlock: ok the same child is refused (EACCES) one directory up\n");
      return kVerified;
    case 20:
      printf("landlock: WRONG the restricted child could not write beneath its allowed directory\n");
      return kWrong;
    case 21:
      printf("landlock: WRONG the restricted child wrote outside its allowed directory\n");
      return kWrong;
    case 22:
      printf("landlock: WRONG the write outside failed, but not with EACCES\n");
      return kWrong;
    default:
      printf("landlock: WRONG the child failed to set up the ruleset (exit code %d)\n", code);
      return kWrong;
  }
}

int ProbeSeccomp() {
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
    printf("seccomp: unsupported: the kernel is built without seccomp (PR_GET_SECCOMP: EINVAL)\n");
    return kUnsupported;
  }
  pid_t pid = fork();
  if (pid == 0) {
    // Child: async-signal-safe calls only. The filter answers getppid with EPERM and allows the
    // rest; it checks the architecture first so that a foreign-ABI syscall number cannot alias.
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
#elif defined(__aarch64__)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0),
#else
#error "kernel_probe: add this architecture's AUDIT_ARCH value"
#endif
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])),
                              filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(11);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
      _exit(errno == EINVAL ? 30 : 12);
    }
    long r = syscall(SYS_getppid);
    if (r >= 0) _exit(21);
    _exit(errno == EPERM ? 0 : 22);
  }
  int wstatus = 0;
  if (pid < 0 || waitpid(pid, &wstatus, 0) != pid) {
    fprintf(stderr, "kernel_probe: fork/waitpid: %s\n", strerror(errno));
    return kWrong;
  }
  int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  switch (code) {
    case 0:
      printf("seccomp: ok a filtered child gets EPERM from getppid, the filter's answer\n");
      return kVerified;
    case 30:
      printf("seccomp: unsupported: filter mode refused (EINVAL; kernel without SECCOMP_FILTER)\n");
      return kUnsupported;
    case 21:
      printf("seccomp: WRONG getppid succeeded under a filter that denies it\n");
      return kWrong;
    default:
      printf("seccomp: WRONG the filtered child failed (exit code %d)\n", code);
      return kWrong;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = argc == 2 ? argv[1] : "";
  if (what == "openat2") return ProbeOpenat2();
  if (what == "landlock") return ProbeLandlock();
  if (what == "seccomp") return ProbeSeccomp();
  fprintf(stderr, "usage: kernel_probe openat2|landlock|seccomp\n");
  return 64;
}

// A program the isolation tests (and the red-team `hardening` group) run inside the sandbox: each
// mode tries one forbidden thing and reports the outcome through its exit code and one line of
// output, where a shell would blur errnos.
//
//   memhog MB           allocate and touch MB MiB; exit 0 if it survived
//   forkbomb N          fork up to N children that wait; print how many forks succeeded
//   daemon DURATION     double fork + setsid; the grandchild execs `sleep DURATION`; exit 0 at once
//   connect PORT        TCP connect to 127.0.0.1:PORT; exit 0 if connected, else print the errno
//   write PATH          create PATH; exit 0 if it worked, else print the errno
//   deny SYSCALL        ptrace | mount | unshare | keyctl | io_uring_setup | tiocsti:
//                       exit 0 if the call failed with EPERM, 1 if it worked, 2 for another errno
// mutation: skip-file(test support: the program the isolation tests run inside the sandbox)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int MemHog(long mb) {
  for (long i = 0; i < mb; ++i) {
    void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::printf("mmap failed after %ld MiB: %s\n", i, strerror(errno));
      return 3;
    }
    std::memset(p, 1, 1 << 20);
  }
  std::printf("survived %ld MiB\n", mb);
  return 0;
}

int ForkBomb(int n) {
  int forked = 0;
  for (; forked < n; ++forked) {
    pid_t pid = fork();
    if (pid == 0) {
      pause();
      _exit(0);
    }
    if (pid < 0) break;
  }
  std::printf("forked %d\n", forked);
  std::fflush(stdout);
  return 0;
}

// The classic daemonize: the first child starts a new session and forks the daemon; the parent
// waits for the first child, so when this program exits the daemon already left the process group.
int Daemon(const char* duration) {
  pid_t child = fork();
  if (child == 0) {
    setsid();
    if (fork() == 0) {
      execl("/bin/sleep", "sleep", duration, nullptr);
      _exit(127);
    }
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  return 0;
}

int Connect(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) {
    std::printf("socket: %s\n", strerror(errno));
    return 1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::printf("connect: %s\n", strerror(errno));
    return 1;
  }
  std::printf("connected\n");
  return 0;
}

int Write(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::printf("open: %s\n", strerror(errno));
    return 1;
  }
  close(fd);
  std::printf("written\n");
  return 0;
}

long Attempt(const std::string& name) {
  if (name == "ptrace") return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
  if (name == "mount") return mount("none", "/mnt", "tmpfs", 0, nullptr);
  if (name == "unshare") return unshare(CLONE_NEWUTS);
  if (name == "keyctl") return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1);
  if (name == "io_uring_setup") {
    io_uring_params params{};
    return syscall(SYS_io_uring_setup, 1, &params);
  }
  if (name == "tiocsti") {
    char c = 'x';
    int fd = open("/dev/tty", O_RDWR);
    return ioctl(fd >= 0 ? fd : 0, TIOCSTI, &c);
  }
  errno = EINVAL;
  return -2;
}

int Deny(const std::string& name) {
  long rc = Attempt(name);
  if (rc == -2) return 4;
  if (rc >= 0) {
    std::printf("%s worked\n", name.c_str());
    return 1;
  }
  std::printf("%s: %s\n", name.c_str(), strerror(errno));
  return errno == EPERM ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: hardening_helper MODE ARG\n");
    return 64;
  }
  const std::string mode = argv[1];
  if (mode == "memhog") return MemHog(std::atol(argv[2]));
  if (mode == "forkbomb") return ForkBomb(std::atoi(argv[2]));
  if (mode == "daemon") return Daemon(argv[2]);
  if (mode == "connect") return Connect(std::atoi(argv[2]));
  if (mode == "write") return Write(argv[2]);
  if (mode == "deny") return Deny(argv[2]);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 64;
}

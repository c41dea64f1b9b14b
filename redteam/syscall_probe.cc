// A tiny program the hardening cases run inside the sandbox: for each name on its command line it
// makes that one system call and prints "name=OK" or "name=<errno name>", so a case can assert what
// the seccomp profile (and the other layers) did, call by call, without a shell in between.
//
// Every call is harmless when it succeeds: the mount is a tmpfs on a directory in the current
// (workspace) directory and is unmounted at once; unshare only affects this process; keyctl reads an
// id; io_uring and bpf file descriptors are closed.
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

const char* ErrnoName(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    case ENOTTY: return "ENOTTY";
    case ENXIO: return "ENXIO";
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case ENOENT: return "ENOENT";
    case EFAULT: return "EFAULT";
    default: return "EOTHER";
  }
}

// The result of one probe: 0 when the call succeeded, otherwise the errno.
int Probe(const std::string& name) {
  if (name == "ptrace") {
    return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0 : errno;
  }
  if (name == "mount") {
    mkdir("probe_mnt", 0755);
    if (mount("none", "probe_mnt", "tmpfs", 0, "size=1m") != 0) return errno;
    umount2("probe_mnt", MNT_DETACH);
    return 0;
  }
  if (name == "unshare") {
    return unshare(CLONE_NEWUTS) == 0 ? 0 : errno;
  }
  if (name == "keyctl") {
    return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) >= 0 ? 0 : errno;
  }
  if (name == "io_uring_setup") {
    struct io_uring_params params;
    std::memset(&params, 0, sizeof params);
    const long fd = syscall(SYS_io_uring_setup, 1, &params);
    if (fd < 0) return errno;
    close(static_cast<int>(fd));
    return 0;
  }
  if (name == "bpf") {
    union bpf_attr attr;
    std::memset(&attr, 0, sizeof attr);
    const long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
    if (fd < 0) return errno;
    close(static_cast<int>(fd));
    return 0;
  }
  if (name == "tiocsti") {
    // Push a character into the controlling terminal's input: the classic sandbox escape.
    const int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    const int fd = tty >= 0 ? tty : 0;
    const char c = '#';
    const int rc = ioctl(fd, TIOCSTI, &c);
    const int err = errno;
    if (tty >= 0) close(tty);
    return rc == 0 ? 0 : err;
  }
  return ENOSYS;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const int err = Probe(argv[i]);
    std::printf("%s=%s\n", argv[i], err == 0 ? "OK" : ErrnoName(err));
  }
  return 0;
}

#include "sandbox/linux/namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "sandbox/errors.h"
#include "sandbox/linux/system_headers.h"

namespace sandbox::linux_layers {
namespace la = ::sandbox::linux_abi;
namespace {

const PreparedNamespaces& P(const void* arg) { return *static_cast<const PreparedNamespaces*>(arg); }

// ---------------------------------------------------------------------------------------------
// Child steps: async-signal-safe (system calls on memory prepared in the parent; no allocation).

int Unshare(const void* arg) { return unshare(P(arg).unshare_flags) == 0 ? 0 : errno; }

int WriteUidMap(const void* arg) { return WriteFileAt(AT_FDCWD, "/proc/self/uid_map", P(arg).uid_map.c_str()); }

// An unprivileged process may map its own gid only after giving up setgroups(2) (user_namespaces(7)).
int DenySetgroups(const void*) {
  int err = WriteFileAt(AT_FDCWD, "/proc/self/setgroups", "deny");
  return err == ENOENT ? 0 : err;  // Before Linux 3.19 the file does not exist; nothing to deny.
}

int WriteGidMap(const void* arg) { return WriteFileAt(AT_FDCWD, "/proc/self/gid_map", P(arg).gid_map.c_str()); }

// Our mounts must not propagate back to the host's namespace.
int MakeMountsPrivate(const void*) {
  return mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 ? 0 : errno;
}

// A detached copy of the workspace, taken before the tree turns read-only and before a private /tmp
// may hide it; attached again on top of everything by AttachWorkspace.
int CloneWorkspace(const void* arg) {
  long fd = syscall(__NR_open_tree, AT_FDCWD, P(arg).options.workspace.c_str(),
                    la::kOpenTreeClone | la::kAtRecursive | la::kOpenTreeCloexec);
  if (fd < 0) return errno;
  P(arg).workspace_tree = static_cast<int>(fd);
  return 0;
}

int RemountReadOnly(const void*) {
  la::MountAttr attr{la::kMountAttrRdonly | la::kMountAttrNosuid, 0, 0, 0};
  return syscall(__NR_mount_setattr, AT_FDCWD, "/", la::kAtRecursive, &attr, sizeof(attr)) == 0 ? 0
                                                                                                  : errno;
}

int MountPrivateTmp(const void*) {
  return mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1g") == 0 ? 0 : errno;
}

int MakeWorkspaceDirs(const void* arg) {
  for (const std::string& dir : P(arg).workspace_dirs) {
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return errno;
  }
  return 0;
}

int AttachWorkspace(const void* arg) {
  const PreparedNamespaces& p = P(arg);
  long rc = syscall(__NR_move_mount, p.workspace_tree, "", AT_FDCWD, p.options.workspace.c_str(),
                    la::kMoveMountFEmptyPath);
  int err = rc == 0 ? 0 : errno;
  close(p.workspace_tree);
  p.workspace_tree = -1;
  return err;
}

int SetHostname(const void* arg) {
  const std::string& name = P(arg).options.hostname;
  return sethostname(name.c_str(), name.size()) == 0 ? 0 : errno;
}

int BringLoopbackUp(const void*) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  ifreq ifr;
  std::memset(&ifr, 0, sizeof(ifr));
  std::memcpy(ifr.ifr_name, "lo", 3);
  int err = 0;
  if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
    err = errno;
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) err = errno;
  }
  close(s);
  return err;
}

void CloseAllExcept(int keep) {
  if (keep > 0) syscall(__NR_close_range, 0u, static_cast<unsigned>(keep - 1), 0u);
  syscall(__NR_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u);
}

// The runner's direct child, outside the pid namespace: waits for init and mirrors the command's
// status. It ignores SIGTERM and friends, so the command gets the runner's grace period; a SIGKILL
// to the group ends it, and init then gets its death signal.
[[noreturn]] void WaitAndMirror(pid_t init, int status_fd) {
  CloseAllExcept(status_fd);
  struct sigaction ign;
  std::memset(&ign, 0, sizeof(ign));
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaction(sig, &ign, nullptr);
  int status = 0;
  while (waitpid(init, &status, 0) < 0) {
    if (errno != EINTR) _exit(127);
  }
  int command_status;
  if (read(status_fd, &command_status, sizeof(command_status)) == sizeof(command_status)) {
    status = command_status;
  }
  MirrorStatus(status);
}

// pid 1: reaps every orphan of the namespace; when the command exits, reports its status and exits,
// and the kernel kills whatever is left in the namespace.
[[noreturn]] void RunInit(pid_t command, int status_fd) {
  CloseAllExcept(status_fd);
  while (true) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid == command) {
      WriteAll(status_fd, &status, sizeof(status));
      _exit(0);
    }
    if (pid < 0 && errno != EINTR) _exit(127);
  }
}

int ForkIntoPidNamespace(const void*) {
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) return errno;
  pid_t init = fork();
  if (init < 0) return errno;
  if (init > 0) WaitAndMirror(init, status_pipe[0]);
  // pid 1 of the new namespace.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  pid_t command = fork();
  if (command < 0) return errno;
  if (command > 0) RunInit(command, status_pipe[1]);
  close(status_pipe[0]);
  close(status_pipe[1]);
  return 0;
}

// A /proc that shows the new pid namespace (the host's would show every host process).
int MountProc(const void*) {
  return mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0 : errno;
}

// End of the child steps.
// ---------------------------------------------------------------------------------------------

std::string ReadSysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  if (!(in >> value)) return "absent";
  return value;
}

}  // namespace

absl::StatusOr<PreparedNamespaces> PrepareNamespaces(const NamespaceOptions& options) {
  PreparedNamespaces p;
  p.options = options;
  if (options.mount) {
    if (options.workspace.empty() || options.workspace[0] != '/') {
      return MakeError(ErrorCode::kEINVAL, absl::StrCat("namespaces: workspace must be an absolute path, got '",
                                                        options.workspace, "'"));
    }
    char real[PATH_MAX];
    if (realpath(options.workspace.c_str(), real) == nullptr) {
      return ErrnoError(errno, absl::StrCat("realpath(", options.workspace, ")"));
    }
    p.options.workspace = real;
    if (p.options.workspace == "/") {
      return MakeError(ErrorCode::kEINVAL, "namespaces: the workspace cannot be / (nothing would be read-only)");
    }
    if (options.private_tmp && p.options.workspace.rfind("/tmp/", 0) == 0) {
      for (size_t i = 5; i <= p.options.workspace.size(); ++i) {
        if (i == p.options.workspace.size() || p.options.workspace[i] == '/') {
          p.workspace_dirs.push_back(p.options.workspace.substr(0, i));
        }
      }
    }
  }
  if (options.user) p.unshare_flags |= CLONE_NEWUSER;
  if (options.mount) p.unshare_flags |= CLONE_NEWNS;
  if (options.pid) p.unshare_flags |= CLONE_NEWPID;
  if (options.net) p.unshare_flags |= CLONE_NEWNET;
  if (options.ipc) p.unshare_flags |= CLONE_NEWIPC;
  if (options.uts) p.unshare_flags |= CLONE_NEWUTS;
  // Map our own ids to themselves: needs no privilege, and files keep their owners.
  p.uid_map = absl::StrCat(geteuid(), " ", geteuid(), " 1");
  p.gid_map = absl::StrCat(getegid(), " ", getegid(), " 1");
  return p;
}

std::vector<LayerStep> IsolateSteps(const PreparedNamespaces& p) {
  std::vector<LayerStep> steps;
  if (p.unshare_flags == 0) return steps;
  steps.push_back({"unshare(namespaces)", Unshare, &p});
  for (const LayerStep& step : SetupSteps(p)) steps.push_back(step);
  return steps;
}

std::vector<LayerStep> SetupSteps(const PreparedNamespaces& p) {
  std::vector<LayerStep> steps;
  if (p.unshare_flags == 0) return steps;
  if (p.options.user) {
    steps.push_back({"write(/proc/self/uid_map)", WriteUidMap, &p});
    steps.push_back({"write(/proc/self/setgroups)", DenySetgroups, &p});
    steps.push_back({"write(/proc/self/gid_map)", WriteGidMap, &p});
  }
  if (p.options.mount) {
    steps.push_back({"mount(/, MS_REC|MS_PRIVATE)", MakeMountsPrivate, &p});
    steps.push_back({"open_tree(workspace, OPEN_TREE_CLONE)", CloneWorkspace, &p});
    steps.push_back({"mount_setattr(/, MOUNT_ATTR_RDONLY)", RemountReadOnly, &p});
    if (p.options.private_tmp) {
      steps.push_back({"mount(tmpfs, /tmp)", MountPrivateTmp, &p});
      steps.push_back({"mkdir(workspace parents in /tmp)", MakeWorkspaceDirs, &p});
    }
    steps.push_back({"move_mount(workspace)", AttachWorkspace, &p});
  }
  if (p.options.uts) steps.push_back({"sethostname", SetHostname, &p});
  if (p.options.net && p.options.loopback_up) steps.push_back({"ioctl(lo, SIOCSIFFLAGS)", BringLoopbackUp, &p});
  return steps;
}

LayerStep MountProcStep() { return {"mount(proc, /proc)", MountProc, nullptr}; }

std::vector<LayerStep> PidNamespaceSteps(const PreparedNamespaces& p) {
  std::vector<LayerStep> steps;
  if (!p.options.pid) return steps;
  steps.push_back({"fork(pid namespace init)", ForkIntoPidNamespace, &p});
  if (p.options.mount) steps.push_back({"mount(proc, /proc)", MountProc, &p});
  return steps;
}

std::vector<std::string> NamespaceLayerNames(const PreparedNamespaces& p) {
  std::vector<std::string> names;
  if (p.options.user) names.push_back("userns");
  if (p.options.mount) names.push_back(p.options.private_tmp ? "mountns(ro,private_tmp)" : "mountns(ro)");
  if (p.options.pid) names.push_back("pidns");
  if (p.options.net) names.push_back(p.options.loopback_up ? "netns(lo)" : "netns");
  if (p.options.ipc) names.push_back("ipcns");
  if (p.options.uts) names.push_back("utsns");
  return names;
}

absl::Status ProbeNamespaces(const NamespaceOptions& options) {
  NamespaceOptions probe = options;
  probe.mount = false;  // The probe checks that the namespaces can be created, not the mounts.
  absl::StatusOr<PreparedNamespaces> prepared = PrepareNamespaces(probe);
  if (!prepared.ok()) return prepared.status();
  if (options.mount) prepared->unshare_flags |= CLONE_NEWNS;

  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new std::map<int, int>();  // unshare flags -> errno of the probe.
  absl::MutexLock lock(&mu);
  auto it = cache->find(prepared->unshare_flags);
  if (it == cache->end()) {
    std::vector<LayerStep> steps = IsolateSteps(*prepared);
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return ErrnoError(errno, "pipe2(namespace probe)");
    pid_t pid = fork();
    if (pid == 0) {  // Async-signal-safe from here to _exit.
      StepFailure f = RunSteps(steps);
      int err = f.err;
      WriteAll(report[1], &err, sizeof(err));
      _exit(0);
    }
    close(report[1]);
    int err = pid < 0 ? errno : EIO;
    if (pid > 0) {
      if (read(report[0], &err, sizeof(err)) != sizeof(err)) err = EIO;
      waitpid(pid, nullptr, 0);
    }
    close(report[0]);
    it = cache->emplace(prepared->unshare_flags, err).first;
  }
  if (it->second == 0) return absl::OkStatus();
  return MakeError(ErrorCode::kEUNSUPPORTED,
                   absl::StrCat("namespaces: unshare failed here: ", strerror(it->second),
                                " (user.max_user_namespaces=", ReadSysctl("/proc/sys/user/max_user_namespaces"),
                                ", kernel.unprivileged_userns_clone=",
                                ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone"),
                                ", kernel.apparmor_restrict_unprivileged_userns=",
                                ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"), ")"));
}

}  // namespace sandbox::linux_layers

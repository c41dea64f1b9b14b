#include "sandbox/linux/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "sandbox/errors.h"
#include "sandbox/linux/system_headers.h"

namespace sandbox::linux_layers {
namespace la = ::sandbox::linux_abi;
namespace {

constexpr uint64_t kReadOnlyAccess = la::kLandlockFsExecute | la::kLandlockFsReadFile | la::kLandlockFsReadDir;
// Rights that a rule on a file (not a directory) may carry; the kernel refuses others with EINVAL.
constexpr uint64_t kFileAccess = la::kLandlockFsExecute | la::kLandlockFsWriteFile |
                                 la::kLandlockFsReadFile | la::kLandlockFsTruncate |
                                 la::kLandlockFsIoctlDev;

// Filesystem rights by ABI. IOCTL_DEV (ABI 5) is left unhandled: handling it would refuse terminal
// ioctls on devices opened inside the sandbox, and the dangerous ones (TIOCSTI) are seccomp's job.
uint64_t HandledFs(int abi) {
  uint64_t fs = (la::kLandlockFsMakeSym << 1) - 1;  // ABI 1: bits 0..12.
  if (abi >= 2) fs |= la::kLandlockFsRefer;
  if (abi >= 3) fs |= la::kLandlockFsTruncate;
  return fs;
}

// --- Child steps: syscalls on prepared memory only. ---

int CreateRuleset(const void* arg) {
  const auto* p = static_cast<const PreparedLandlock*>(arg);
  la::LandlockRulesetAttr attr{p->handled_fs, p->handled_net, p->scoped};
  long fd = syscall(__NR_landlock_create_ruleset, &attr, p->attr_size, 0);
  if (fd < 0) return errno;
  p->ruleset_fd = static_cast<int>(fd);
  return 0;
}

// A path that does not exist in this mount namespace has nothing to grant: skipped.
int AddPathRule(int ruleset_fd, const char* path, uint64_t access) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : errno;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return err;
  }
  if (!S_ISDIR(st.st_mode)) access &= kFileAccess;
  la::LandlockPathBeneathAttr rule{access, fd};
  long rc = syscall(__NR_landlock_add_rule, ruleset_fd, la::kLandlockRulePathBeneath, &rule, 0);
  int err = rc == 0 ? 0 : errno;
  close(fd);
  return err;
}

int AddRules(const void* arg) {
  const auto* p = static_cast<const PreparedLandlock*>(arg);
  for (const std::string& path : p->read_only) {
    if (int err = AddPathRule(p->ruleset_fd, path.c_str(), p->read_only_access); err != 0) return err;
  }
  for (const std::string& path : p->read_write) {
    if (int err = AddPathRule(p->ruleset_fd, path.c_str(), p->read_write_access); err != 0) return err;
  }
  return 0;
}

int RestrictSelf(const void* arg) {
  const auto* p = static_cast<const PreparedLandlock*>(arg);
  long rc = syscall(__NR_landlock_restrict_self, p->ruleset_fd, 0);
  int err = rc == 0 ? 0 : errno;
  close(p->ruleset_fd);
  p->ruleset_fd = -1;
  return err;
}

}  // namespace

int LandlockAbi(std::string* why) {
  long abi = syscall(__NR_landlock_create_ruleset, nullptr, 0, la::kLandlockCreateRulesetVersion);
  if (abi >= 1) return static_cast<int>(abi);
  if (why != nullptr) {
    *why = errno == ENOSYS       ? "kernel built without CONFIG_SECURITY_LANDLOCK (Linux >= 5.13)"
           : errno == EOPNOTSUPP ? "Landlock is not enabled at boot (add landlock to the lsm= list)"
                                 : absl::StrCat("landlock_create_ruleset: ", strerror(errno));
  }
  return 0;
}

absl::StatusOr<PreparedLandlock> PrepareLandlock(const LandlockPolicy& policy) {
  std::string why;
  const int abi = LandlockAbi(&why);
  return PrepareLandlockForAbi(policy, abi, why);
}

absl::StatusOr<PreparedLandlock> PrepareLandlockForAbi(const LandlockPolicy& policy, int abi,
                                                       const std::string& why) {
  PreparedLandlock p;
  p.abi = abi;
  if (p.abi == 0) return MakeError(ErrorCode::kEUNSUPPORTED, absl::StrCat("landlock: ", why));
  for (const auto* list : {&policy.read_only, &policy.read_write}) {
    for (const std::string& path : *list) {
      if (path.empty() || path[0] != '/') {
        return MakeError(ErrorCode::kEINVAL, absl::StrCat("landlock: path must be absolute: '", path, "'"));
      }
    }
  }
  p.handled_fs = HandledFs(p.abi);
  p.read_only_access = kReadOnlyAccess;
  p.read_write_access = p.handled_fs;
  p.attr_size = la::kLandlockRulesetAttrSizeV1;
  if (policy.deny_tcp && p.abi >= 4) {
    p.handled_net = la::kLandlockNetBindTcp | la::kLandlockNetConnectTcp;
    p.attr_size = la::kLandlockRulesetAttrSizeV4;
  }
  if (policy.scope_ipc && p.abi >= 6) {
    p.scoped = la::kLandlockScopeAbstractUnixSocket | la::kLandlockScopeSignal;
    p.attr_size = la::kLandlockRulesetAttrSizeV6;
  }
  p.read_only = policy.read_only;
  p.read_write = policy.read_write;
  return p;
}

std::array<LayerStep, 3> LandlockSteps(const PreparedLandlock& prepared) {
  return {{
      {"landlock_create_ruleset", CreateRuleset, &prepared},
      {"landlock_add_rule", AddRules, &prepared},
      {"landlock_restrict_self", RestrictSelf, &prepared},
  }};
}

std::string DescribeLandlock(const PreparedLandlock& p) {
  return absl::StrCat("landlock(abi=", p.abi, ",fs", p.handled_net != 0 ? ",net" : "",
                      p.scoped != 0 ? ",scope" : "", ")");
}

}  // namespace sandbox::linux_layers

#include "sandbox/linux/capabilities.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>

#include "sandbox/errors.h"

namespace sandbox::linux_layers {
namespace {

// Everything below runs in the forked child: prctl and capget/capset only.

bool HasSetpcap() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)) != 0;
}

int DropBoundingSet(const void* arg) {
  if (!HasSetpcap()) return 0;
  const int last = static_cast<const CapabilityDrop*>(arg)->last_cap;
  for (int cap = 0; cap <= last; ++cap) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  }
  return 0;
}

// Without SECBIT_NOROOT, exec gives uid 0 a full permitted set (bounded by the now empty bounding
// set, but lock it anyway: defence in depth, and it keeps a later setuid(0) meaningless).
int LockSecurebits(const void*) {
  if (!HasSetpcap()) return 0;
  const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  return prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) == 0 ? 0 : errno;
}

int ClearAmbient(const void*) {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0) return 0;
  return errno == EINVAL ? 0 : errno;  // EINVAL: a kernel before ambient capabilities (4.3).
}

int ClearCapabilitySets(const void*) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  return syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

int SetNoNewPrivs(const void*) {
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno;
}

}  // namespace

absl::StatusOr<CapabilityDrop> PrepareCapabilityDrop() {
  CapabilityDrop drop;
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  if (!(in >> drop.last_cap)) drop.last_cap = CAP_LAST_CAP;  // No /proc: the header's value.
  if (drop.last_cap < 0 || drop.last_cap > 63) {
    return MakeError(ErrorCode::kEINTERNAL, "cap_last_cap out of range");
  }
  return drop;
}

std::array<LayerStep, 4> DropCapabilitiesSteps(const CapabilityDrop& drop) {
  return {{
      {"prctl(PR_CAPBSET_DROP)", DropBoundingSet, &drop},
      {"prctl(PR_SET_SECUREBITS)", LockSecurebits, nullptr},
      {"prctl(PR_CAP_AMBIENT_CLEAR_ALL)", ClearAmbient, nullptr},
      {"capset(0)", ClearCapabilitySets, nullptr},
  }};
}

LayerStep NoNewPrivsStep() { return {"prctl(PR_SET_NO_NEW_PRIVS)", SetNoNewPrivs, nullptr}; }

}  // namespace sandbox::linux_layers

// Kernel constants and structures that older userspace headers lack, in one place (as Chromium's
// sandbox/linux/system_headers/). Everything here is guarded, so newer headers win when present; the
// values are the kernel's ABI and never change.
//
// Thread- and signal-safety: constants and plain structs only.
#ifndef SANDBOX_LINUX_SYSTEM_HEADERS_H_
#define SANDBOX_LINUX_SYSTEM_HEADERS_H_

#include <linux/types.h>
#include <sys/syscall.h>

#include <cstdint>

// ---- Landlock (Linux 5.13+; ABI versions 1..7) ----
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

namespace sandbox::linux_abi {

inline constexpr uint32_t kLandlockCreateRulesetVersion = 1u << 0;
inline constexpr int kLandlockRulePathBeneath = 1;
inline constexpr int kLandlockRuleNetPort = 2;

// Filesystem access rights (ABI 1 unless noted).
inline constexpr uint64_t kLandlockFsExecute = 1ull << 0;
inline constexpr uint64_t kLandlockFsWriteFile = 1ull << 1;
inline constexpr uint64_t kLandlockFsReadFile = 1ull << 2;
inline constexpr uint64_t kLandlockFsReadDir = 1ull << 3;
inline constexpr uint64_t kLandlockFsRemoveDir = 1ull << 4;
inline constexpr uint64_t kLandlockFsRemoveFile = 1ull << 5;
inline constexpr uint64_t kLandlockFsMakeChar = 1ull << 6;
inline constexpr uint64_t kLandlockFsMakeDir = 1ull << 7;
inline constexpr uint64_t kLandlockFsMakeReg = 1ull << 8;
inline constexpr uint64_t kLandlockFsMakeSock = 1ull << 9;
inline constexpr uint64_t kLandlockFsMakeFifo = 1ull << 10;
inline constexpr uint64_t kLandlockFsMakeBlock = 1ull << 11;
inline constexpr uint64_t kLandlockFsMakeSym = 1ull << 12;
inline constexpr uint64_t kLandlockFsRefer = 1ull << 13;     // ABI 2.
inline constexpr uint64_t kLandlockFsTruncate = 1ull << 14;  // ABI 3.
inline constexpr uint64_t kLandlockFsIoctlDev = 1ull << 15;  // ABI 5.
// Network access rights (ABI 4).
inline constexpr uint64_t kLandlockNetBindTcp = 1ull << 0;
inline constexpr uint64_t kLandlockNetConnectTcp = 1ull << 1;
// IPC scoping (ABI 6).
inline constexpr uint64_t kLandlockScopeAbstractUnixSocket = 1ull << 0;
inline constexpr uint64_t kLandlockScopeSignal = 1ull << 1;

// struct landlock_ruleset_attr as of ABI 6. The kernel accepts a shorter size from older callers, and
// a longer one only when the tail is zero, so the size passed is chosen per ABI (see landlock.cc).
struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4.
  uint64_t scoped;              // ABI 6.
};
inline constexpr size_t kLandlockRulesetAttrSizeV1 = 8;
inline constexpr size_t kLandlockRulesetAttrSizeV4 = 16;
inline constexpr size_t kLandlockRulesetAttrSizeV6 = 24;

struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

// ---- Mount API (open_tree/move_mount 5.2, mount_setattr 5.12) ----
inline constexpr unsigned kOpenTreeClone = 1;
inline constexpr unsigned kOpenTreeCloexec = 02000000;  // O_CLOEXEC
inline constexpr unsigned kMoveMountFEmptyPath = 0x00000004;
inline constexpr unsigned kAtRecursive = 0x8000;
inline constexpr uint64_t kMountAttrRdonly = 0x00000001;
inline constexpr uint64_t kMountAttrNosuid = 0x00000002;
inline constexpr uint64_t kMountAttrNodev = 0x00000004;
struct MountAttr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

// ---- pidfd (5.3 / 5.1) ----
inline constexpr unsigned kPidfdNonblock = 04000;  // O_NONBLOCK

// ---- cgroup v2 ----
inline constexpr long kCgroup2SuperMagic = 0x63677270;

}  // namespace sandbox::linux_abi

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif

#endif  // SANDBOX_LINUX_SYSTEM_HEADERS_H_

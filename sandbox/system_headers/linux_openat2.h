// openat2(2) constants and its argument struct, for C libraries and kernel headers older than
// Linux 5.6 (as Chromium's sandbox/linux/system_headers/). Values are the kernel's ABI
// (include/uapi/linux/openat2.h, arch/*/include/uapi/asm/unistd*.h); they never change.
// The struct is our own copy so that old <linux/openat2.h>-less systems build too.
#ifndef SANDBOX_SYSTEM_HEADERS_LINUX_OPENAT2_H_
#define SANDBOX_SYSTEM_HEADERS_LINUX_OPENAT2_H_

#include <sys/syscall.h>

#include <cstdint>

#if !defined(__NR_openat2)
#if defined(__alpha__)
#define __NR_openat2 547
#else
// 437 on every architecture that uses the unified syscall table (x86-64, i386, arm, arm64, riscv,
// s390, ppc, mips n64 adds 5000 but is not a target here).
#define __NR_openat2 437
#endif
#endif

namespace sandbox::linux_abi {

// struct open_how (extensible; size 24 is OPEN_HOW_SIZE_VER0).
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
static_assert(sizeof(OpenHow) == 24, "struct open_how VER0 is 24 bytes");

inline constexpr uint64_t kResolveNoXdev = 0x01;
inline constexpr uint64_t kResolveNoMagiclinks = 0x02;
inline constexpr uint64_t kResolveNoSymlinks = 0x04;
inline constexpr uint64_t kResolveBeneath = 0x08;
inline constexpr uint64_t kResolveInRoot = 0x10;

}  // namespace sandbox::linux_abi

#endif  // SANDBOX_SYSTEM_HEADERS_LINUX_OPENAT2_H_

#include "sandbox/linux/seccomp.h"

#include <errno.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "sandbox/errors.h"
#include "sandbox/status_macros.h"
#include "sandbox/unique_fd.h"

namespace sandbox::linux_layers {
namespace {

uint32_t ToLibseccompAction(const SeccompAction& a) {
  switch (a.kind) {
    case SeccompAction::Kind::kAllow:
      return SCMP_ACT_ALLOW;
    case SeccompAction::Kind::kErrno:
      return SCMP_ACT_ERRNO(static_cast<uint32_t>(a.errno_value));
    case SeccompAction::Kind::kKill:
      return SCMP_ACT_KILL_PROCESS;
  }
  return SCMP_ACT_KILL_PROCESS;
}

scmp_arg_cmp ToLibseccompCondition(const ArgCondition& c) {
  switch (c.op) {
    case ArgCondition::Op::kEq:
      return SCMP_CMP(static_cast<unsigned>(c.index), SCMP_CMP_EQ, c.value);
    case ArgCondition::Op::kNe:
      return SCMP_CMP(static_cast<unsigned>(c.index), SCMP_CMP_NE, c.value);
    case ArgCondition::Op::kMaskedEq:
      return SCMP_CMP(static_cast<unsigned>(c.index), SCMP_CMP_MASKED_EQ, c.mask, c.value);
  }
  return SCMP_CMP(0, SCMP_CMP_EQ, 0);
}

// The table restrictions of seccomp_policy.h, checked before libseccomp sees the rules.
absl::Status ValidateProfile(const SeccompProfile& profile) {
  std::map<std::string, int> unconditional, total;
  for (const SyscallRule& rule : profile.rules) {
    if (rule.action == profile.default_action) {
      return MakeError(ErrorCode::kEINVAL, absl::StrCat("seccomp profile ", profile.name, ": rule for ",
                                                        rule.syscall, " repeats the default action"));
    }
    std::set<int> args;
    for (const ArgCondition& c : rule.conditions) {
      if (c.index < 0 || c.index > 5 || !args.insert(c.index).second) {
        return MakeError(ErrorCode::kEINVAL,
                         absl::StrCat("seccomp profile ", profile.name, ": rule for ", rule.syscall,
                                      " compares argument ", c.index, " twice or out of range"));
      }
    }
    total[rule.syscall]++;
    if (rule.conditions.empty()) unconditional[rule.syscall]++;
  }
  for (const auto& [name, n] : unconditional) {
    if (total[name] > 1) {
      return MakeError(ErrorCode::kEINVAL,
                       absl::StrCat("seccomp profile ", profile.name, ": ", name,
                                    " has an unconditional rule and others; libseccomp would let "
                                    "the unconditional one win"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<sock_filter>> ExportBpf(scmp_filter_ctx ctx) {
  // libseccomp 2.5 exports only to a file descriptor; a memfd keeps it in memory.
  UniqueFd fd(static_cast<int>(syscall(SYS_memfd_create, "seccomp-bpf", MFD_CLOEXEC)));
  if (!fd.valid()) return ErrnoError(errno, "memfd_create(seccomp-bpf)");
  if (int rc = seccomp_export_bpf(ctx, fd.get()); rc != 0) return ErrnoError(-rc, "seccomp_export_bpf()");
  off_t size = lseek(fd.get(), 0, SEEK_END);
  if (size < 0) return ErrnoError(errno, "lseek(seccomp-bpf)");
  std::vector<sock_filter> out(static_cast<size_t>(size) / sizeof(sock_filter));
  if (pread(fd.get(), out.data(), out.size() * sizeof(sock_filter), 0) !=
      static_cast<ssize_t>(out.size() * sizeof(sock_filter))) {
    return ErrnoError(errno, "pread(seccomp-bpf)");
  }
  return out;
}

}  // namespace

absl::StatusOr<BpfProgram> CompileProfile(const SeccompProfile& profile) {
  SB_RETURN_IF_ERROR(ValidateProfile(profile));
  scmp_filter_ctx ctx = seccomp_init(ToLibseccompAction(profile.default_action));
  if (ctx == nullptr) return MakeError(ErrorCode::kEIO, "seccomp_init() failed");
  absl::Cleanup release = [ctx] { seccomp_release(ctx); };
  // no_new_privs is set by its own layer, in the order DESIGN.md gives; the filter must not set it.
  if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); rc != 0) {
    return ErrnoError(-rc, "seccomp_attr_set(SCMP_FLTATR_CTL_NNP)");
  }
  for (const SyscallRule& rule : profile.rules) {
    int nr = seccomp_syscall_resolve_name(rule.syscall.c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // Not a syscall of this architecture.
    std::vector<scmp_arg_cmp> conds;
    for (const ArgCondition& c : rule.conditions) conds.push_back(ToLibseccompCondition(c));
    int rc = seccomp_rule_add_array(ctx, ToLibseccompAction(rule.action), nr,
                                    static_cast<unsigned>(conds.size()), conds.data());
    if (rc != 0) {
      return ErrnoError(-rc, absl::StrCat("seccomp_rule_add(", profile.name, ": ", rule.syscall, ")"));
    }
  }
  SB_ASSIGN_OR_RETURN(std::vector<sock_filter> instructions, ExportBpf(ctx));
  return BpfProgram{profile.name, std::move(instructions)};
}

uint32_t EmulateFilter(const BpfProgram& program, const seccomp_data& data) {
  // A classic-BPF interpreter over seccomp_data, as the kernel's seccomp_check_filter allows.
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  const auto& insns = program.instructions;
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    const sock_filter& in = insns[pc];
    uint32_t src = BPF_SRC(in.code) == BPF_X ? x : in.k;
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        if (BPF_MODE(in.code) == BPF_ABS && in.k + 4 <= sizeof(data)) {
          std::memcpy(&a, reinterpret_cast<const char*>(&data) + in.k, 4);
        } else if (BPF_MODE(in.code) == BPF_IMM) {
          a = in.k;
        } else if (BPF_MODE(in.code) == BPF_MEM && in.k < BPF_MEMWORDS) {
          a = mem[in.k];
        } else if (BPF_MODE(in.code) == BPF_LEN) {
          a = sizeof(data);
        } else {
          return SECCOMP_RET_KILL_PROCESS;
        }
        break;
      case BPF_LDX:
        if (BPF_MODE(in.code) == BPF_IMM) x = in.k;
        else if (BPF_MODE(in.code) == BPF_MEM && in.k < BPF_MEMWORDS) x = mem[in.k];
        else if (BPF_MODE(in.code) == BPF_LEN) x = sizeof(data);
        else return SECCOMP_RET_KILL_PROCESS;
        break;
      case BPF_ST:
        if (in.k >= BPF_MEMWORDS) return SECCOMP_RET_KILL_PROCESS;
        mem[in.k] = a;
        break;
      case BPF_STX:
        if (in.k >= BPF_MEMWORDS) return SECCOMP_RET_KILL_PROCESS;
        mem[in.k] = x;
        break;
      case BPF_ALU:
        switch (BPF_OP(in.code)) {
          case BPF_ADD: a += src; break;
          case BPF_SUB: a -= src; break;
          case BPF_MUL: a *= src; break;
          case BPF_DIV: if (src == 0) return SECCOMP_RET_KILL_PROCESS; a /= src; break;
          case BPF_MOD: if (src == 0) return SECCOMP_RET_KILL_PROCESS; a %= src; break;
          case BPF_OR: a |= src; break;
          case BPF_AND: a &= src; break;
          case BPF_XOR: a ^= src; break;
          case BPF_LSH: a <<= (src & 31); break;
          case BPF_RSH: a >>= (src & 31); break;
          case BPF_NEG: a = -a; break;
          default: return SECCOMP_RET_KILL_PROCESS;
        }
        break;
      case BPF_JMP: {
        bool taken = false;
        switch (BPF_OP(in.code)) {
          case BPF_JA: pc += in.k; continue;
          case BPF_JEQ: taken = a == src; break;
          case BPF_JGT: taken = a > src; break;
          case BPF_JGE: taken = a >= src; break;
          case BPF_JSET: taken = (a & src) != 0; break;
          default: return SECCOMP_RET_KILL_PROCESS;
        }
        pc += taken ? in.jt : in.jf;
        break;
      }
      case BPF_RET:
        return BPF_RVAL(in.code) == BPF_A ? a : in.k;
      case BPF_MISC:
        if (BPF_MISCOP(in.code) == BPF_TAX) x = a;
        else a = x;
        break;
      default:
        return SECCOMP_RET_KILL_PROCESS;
    }
  }
  return SECCOMP_RET_KILL_PROCESS;  // Falling off the end is invalid; the kernel rejects such filters.
}

SeccompAction DecodeAction(uint32_t ret) {
  switch (ret & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_ALLOW:
      return SeccompAction::Allow();
    case SECCOMP_RET_ERRNO:
      return SeccompAction::Errno(static_cast<int>(ret & SECCOMP_RET_DATA));
    default:
      return SeccompAction::Kill();
  }
}

seccomp_data MakeSeccompData(const SyscallCall& call) {
  seccomp_data d{};
  d.nr = call.nr;
  d.arch = seccomp_arch_native();
  for (int i = 0; i < 6; ++i) d.args[i] = call.args[i];
  return d;
}

int InstallFilter(const void* arg) {
  // Async-signal-safe: reads prepared memory and makes one syscall.
  const auto* program = static_cast<const BpfProgram*>(arg);
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(program->instructions.size());
  prog.filter = const_cast<sock_filter*>(program->instructions.data());
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : errno;
}

LayerStep InstallFilterStep(const BpfProgram& program) {
  return {"seccomp(SECCOMP_SET_MODE_FILTER)", InstallFilter, &program};
}

}  // namespace sandbox::linux_layers

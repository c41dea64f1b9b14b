#include "sandbox/linux/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "sandbox/errors.h"
#include "sandbox/linux/cgroup_internal.h"
#include "sandbox/linux/system_headers.h"
#include "sandbox/status_macros.h"

namespace sandbox::linux_layers {
namespace {

constexpr absl::Duration kEmptyBound = absl::Seconds(5);

std::atomic<uint64_t> next_cgroup_id{0};

bool IsCgroup2Mount(const std::string& path) {
  struct statfs fs;
  return statfs(path.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == linux_abi::kCgroup2SuperMagic;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

absl::Status WriteText(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("open(", path, ")"));
  int err = WriteAll(fd, value.data(), value.size());
  close(fd);
  if (err != 0) return ErrnoError(err, absl::StrCat("write(", path, ", ", value, ")"));
  return absl::OkStatus();
}

std::map<std::string, std::string> OwnCgroups(const internal::CgroupHost& host) {
  return internal::ParseProcCgroup(ReadText(host.proc_self_cgroup));
}

// A "key value" line of a flat-keyed cgroup file (memory.events, pids.events, memory.oom_control).
uint64_t ReadKey(const std::string& path, absl::string_view key) {
  std::istringstream in(ReadText(path));
  std::string k;
  uint64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

}  // namespace

namespace internal {

std::map<std::string, std::string> ParseProcCgroup(absl::string_view text) {
  std::map<std::string, std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    if (parts[1].empty()) {
      out[""] = parts[2];
      continue;
    }
    for (absl::string_view c : absl::StrSplit(parts[1], ',')) out[std::string(c)] = parts[2];
  }
  return out;
}

bool CgroupHost::IsCgroup2(const std::string& path) const {
  return is_cgroup2 ? is_cgroup2(path) : IsCgroup2Mount(path);
}

V2Location FindV2(const CgroupHost& host) {
  std::string root = host.IsCgroup2(host.root) ? host.root : absl::StrCat(host.root, "/unified");
  if (!host.IsCgroup2(root)) return {"", "no cgroup2 mount"};
  std::string dir = root + OwnCgroups(host)[""];
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  std::set<std::string> delegated = absl::StrSplit(ReadText(dir + "/cgroup.subtree_control"), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  std::set<std::string> available = absl::StrSplit(ReadText(dir + "/cgroup.controllers"), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  for (const char* c : {"memory", "pids"}) {
    if (!available.count(c)) {
      return {"", absl::StrCat("v2 at ", dir, " lacks the ", c, " controller (bound to v1, or not delegated)")};
    }
    if (!delegated.count(c)) {
      return {"", absl::StrCat("v2: ", c, " not enabled in ", dir,
                               "/cgroup.subtree_control (delegate it, e.g. systemd-run -p Delegate=yes)")};
    }
  }
  if (access(dir.c_str(), W_OK) != 0) return {"", absl::StrCat("v2: ", dir, " is not writable")};
  return {dir, ""};
}

V1Location FindV1(const CgroupHost& host) {
  V1Location loc;
  std::map<std::string, std::string> own = OwnCgroups(host);
  for (const char* c : {"memory", "pids", "cpu"}) {
    std::string mount = absl::StrCat(host.root, "/", c);
    if (!own.count(c) || !Exists(mount + "/cgroup.procs") || host.IsCgroup2(mount)) {
      if (std::string(c) == "cpu") continue;  // Optional: memory and pids are what contain a run.
      loc.why_not = absl::StrCat("no v1 ", c, " controller mounted at ", mount);
      return loc;
    }
    std::string dir = mount + own[c];
    if (dir.back() == '/') dir.pop_back();
    if (access(dir.c_str(), W_OK) != 0) {
      loc.why_not = absl::StrCat("v1: ", dir, " is not writable (", strerror(errno), ")");
      return loc;
    }
    loc.dirs[c] = dir;
  }
  return loc;
}

CgroupProbe ProbeCgroups(const CgroupHost& host) {
  V2Location v2 = FindV2(host);
  if (!v2.dir.empty()) return {CgroupMode::kV2, absl::StrCat("v2 at ", v2.dir)};
  V1Location v1 = FindV1(host);
  if (v1.why_not.empty()) {
    std::vector<std::string> parts;
    for (const auto& [c, dir] : v1.dirs) parts.push_back(absl::StrCat(c, "=", dir));
    return {CgroupMode::kV1, absl::StrCat("v1 (", v2.why_not, "): ", absl::StrJoin(parts, ", "))};
  }
  return {CgroupMode::kNone, absl::StrCat(v2.why_not, "; ", v1.why_not)};
}

}  // namespace internal

namespace {

std::vector<pid_t> ReadProcs(const std::string& dir) {
  std::vector<pid_t> pids;
  std::istringstream in(ReadText(dir + "/cgroup.procs"));
  pid_t pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

// SIGKILL through a pidfd, after checking (with the pidfd pinning the process) that the pid still
// names a member: a pid read from cgroup.procs may have been recycled since.
void KillMember(pid_t pid, const std::string& dir) {
  int pidfd = static_cast<int>(syscall(__NR_pidfd_open, pid, 0));
  if (pidfd < 0) return;  // Gone already.
  std::vector<pid_t> now = ReadProcs(dir);
  if (std::find(now.begin(), now.end(), pid) != now.end()) {
    syscall(__NR_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  }
  close(pidfd);
}

}  // namespace

const char* CgroupModeName(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kV2: return "v2";
    case CgroupMode::kV1: return "v1";
    case CgroupMode::kNone: return "none";
  }
  return "none";
}

CgroupProbe ProbeCgroups() { return internal::ProbeCgroups(internal::CgroupHost{}); }

namespace {

// Makes the same new directory in each parent, or none. The pid alone does not make a name unique:
// in a pid namespace many runners are pid 1, and a runner that was SIGKILLed leaves its directory
// for the next process that gets its pid. So a name taken in any parent is skipped for the next.
absl::StatusOr<std::vector<std::string>> MakeFreshDirs(const std::vector<std::string>& parents) {
  constexpr int kNameAttempts = 64;
  for (int attempt = 1;; ++attempt) {
    const std::string name = absl::StrCat("sandbox-", getpid(), "-", next_cgroup_id++);
    std::vector<std::string> made;
    int err = 0;
    std::string failed;
    for (const std::string& parent : parents) {
      std::string dir = absl::StrCat(parent, "/", name);
      if (mkdir(dir.c_str(), 0755) != 0) {
        err = errno;
        failed = dir;
        break;
      }
      made.push_back(dir);
    }
    if (err == 0) return made;
    for (const std::string& dir : made) rmdir(dir.c_str());
    if (err != EEXIST || attempt == kNameAttempts) {
      return ErrnoError(err, absl::StrCat("mkdir(", failed, ")",
                                          err == EEXIST ? absl::StrCat(" after ", attempt, " names") : ""));
    }
  }
}

}  // namespace

namespace internal {

absl::StatusOr<std::unique_ptr<Cgroup>> CreateV2At(const std::string& parent,
                                                   const CgroupLimits& limits) {
  std::unique_ptr<Cgroup> cg(new Cgroup());
  cg->mode_ = CgroupMode::kV2;
  SB_ASSIGN_OR_RETURN(cg->dirs_, MakeFreshDirs({parent}));
  const std::string& dir = cg->dirs_[0];
  cg->controllers_ = {"memory", "pids", "cpu"};
  if (limits.memory_bytes) {
    SB_RETURN_IF_ERROR(WriteText(dir + "/memory.max", absl::StrCat(*limits.memory_bytes)));
    if (Exists(dir + "/memory.swap.max")) SB_RETURN_IF_ERROR(WriteText(dir + "/memory.swap.max", "0"));
  }
  if (limits.pids) SB_RETURN_IF_ERROR(WriteText(dir + "/pids.max", absl::StrCat(*limits.pids)));
  if (limits.cpu_millis && Exists(dir + "/cpu.max")) {
    SB_RETURN_IF_ERROR(WriteText(dir + "/cpu.max", absl::StrCat(*limits.cpu_millis * 100, " 100000")));
  }
  SB_RETURN_IF_ERROR(cg->OpenProcs());
  return cg;
}

}  // namespace internal

absl::StatusOr<std::unique_ptr<Cgroup>> Cgroup::Create(const CgroupLimits& limits) {
  const internal::CgroupHost host;
  internal::V2Location v2 = internal::FindV2(host);
  if (!v2.dir.empty()) return internal::CreateV2At(v2.dir, limits);
  std::unique_ptr<Cgroup> cg(new Cgroup());
  {
    internal::V1Location v1 = internal::FindV1(host);
    if (!v1.why_not.empty()) {
      return MakeError(ErrorCode::kEUNSUPPORTED, absl::StrCat("cgroup: ", v2.why_not, "; ", v1.why_not));
    }
    cg->mode_ = CgroupMode::kV1;
    std::vector<std::string> parents;
    for (const auto& [controller, parent] : v1.dirs) {
      // Each v1 hierarchy joined costs the child a cgroup.procs migration: skip cpu when unlimited.
      if (controller == "cpu" && !limits.cpu_millis) continue;
      cg->controllers_.push_back(controller);
      parents.push_back(parent);
    }
    SB_ASSIGN_OR_RETURN(cg->dirs_, MakeFreshDirs(parents));
    for (size_t i = 0; i < cg->dirs_.size(); ++i) {
      const std::string& controller = cg->controllers_[i];
      const std::string& dir = cg->dirs_[i];
      if (controller == "memory" && limits.memory_bytes) {
        SB_RETURN_IF_ERROR(WriteText(dir + "/memory.limit_in_bytes", absl::StrCat(*limits.memory_bytes)));
        // With swap accounting, memory+swap gets the same limit: the hog cannot swap its way out.
        if (Exists(dir + "/memory.memsw.limit_in_bytes")) {
          SB_RETURN_IF_ERROR(WriteText(dir + "/memory.memsw.limit_in_bytes", absl::StrCat(*limits.memory_bytes)));
        }
      }
      if (controller == "pids" && limits.pids) {
        SB_RETURN_IF_ERROR(WriteText(dir + "/pids.max", absl::StrCat(*limits.pids)));
      }
      if (controller == "cpu" && limits.cpu_millis) {
        SB_RETURN_IF_ERROR(WriteText(dir + "/cpu.cfs_period_us", "100000"));
        SB_RETURN_IF_ERROR(WriteText(dir + "/cpu.cfs_quota_us", absl::StrCat(*limits.cpu_millis * 100)));
      }
    }
  }
  SB_RETURN_IF_ERROR(cg->OpenProcs());
  return cg;
}

absl::Status Cgroup::OpenProcs() {
  for (const std::string& dir : dirs_) {
    int fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(errno, absl::StrCat("open(", dir, "/cgroup.procs)"));
    procs_fds_.emplace_back(fd);
    raw_procs_fds_.push_back(fd);
  }
  return absl::OkStatus();
}

Cgroup::~Cgroup() { Destroy().IgnoreError(); }

// Child step: async-signal-safe. "0" names the writing process itself (v1 and v2).
int Cgroup::Join(const void* arg) {
  const auto* self = static_cast<const Cgroup*>(arg);
  for (int fd : self->raw_procs_fds_) {
    if (int err = WriteAll(fd, "0", 1); err != 0) return err;
  }
  return 0;
}

LayerStep Cgroup::JoinStep() const { return {"write(cgroup.procs)", Join, this}; }

absl::Status Cgroup::KillAll() {
  if (mode_ == CgroupMode::kV2 && Exists(dirs_[0] + "/cgroup.kill")) {
    SB_RETURN_IF_ERROR(WriteText(dirs_[0] + "/cgroup.kill", "1"));
  }
  // v1 has no cgroup.kill: SIGKILL every member until none is left. A fork bomb cannot outrun it:
  // pids.max caps the members, and each round kills all of them.
  const absl::Time give_up = absl::Now() + kEmptyBound;
  while (true) {
    bool empty = true;
    for (const std::string& dir : dirs_) {
      for (pid_t pid : ReadProcs(dir)) {
        empty = false;
        KillMember(pid, dir);
      }
    }
    if (empty) return absl::OkStatus();
    if (absl::Now() > give_up) {
      return MakeError(ErrorCode::kEIO, absl::StrCat("cgroup ", dirs_[0], " still has processes after SIGKILL"));
    }
    poll(nullptr, 0, 1);
  }
}

CgroupStats Cgroup::Stats() const {
  CgroupStats s;
  for (size_t i = 0; i < dirs_.size(); ++i) {
    const std::string& dir = dirs_[i];
    if (mode_ == CgroupMode::kV2) {
      s.oom_kills = ReadKey(dir + "/memory.events", "oom_kill");
      s.pids_max_hits = ReadKey(dir + "/pids.events", "max");
    } else if (controllers_[i] == "memory") {
      s.oom_kills = ReadKey(dir + "/memory.oom_control", "oom_kill");
      std::string failcnt = ReadText(dir + "/memory.failcnt");
      (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(failcnt), &s.memory_failcnt);
    } else if (controllers_[i] == "pids") {
      s.pids_max_hits = ReadKey(dir + "/pids.events", "max");
    }
  }
  return s;
}

absl::Status Cgroup::Destroy() {
  if (destroyed_) return absl::OkStatus();
  procs_fds_.clear();
  raw_procs_fds_.clear();
  absl::Status killed = KillAll();
  absl::Status removed = absl::OkStatus();
  for (const std::string& dir : dirs_) {
    // A v1 memory cgroup can report EBUSY for a moment after its last task exits.
    int tries = 0;
    while (rmdir(dir.c_str()) != 0) {
      if (errno == ENOENT) break;
      if (errno != EBUSY || ++tries > 200) {
        removed = ErrnoError(errno, absl::StrCat("rmdir(", dir, ")"));
        break;
      }
      poll(nullptr, 0, 5);
    }
  }
  destroyed_ = true;
  return killed.ok() ? removed : killed;
}

std::string Cgroup::Describe() const {
  return absl::StrCat("cgroup(", CgroupModeName(mode_), ":", absl::StrJoin(controllers_, ","), ")");
}

}  // namespace sandbox::linux_layers

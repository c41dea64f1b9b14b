// Internal to //sandbox/linux:cgroup, for its tests: where the runner's own cgroup is, given a
// cgroup mount root and a /proc/self/cgroup, so the v2-first-then-v1 choice and its reasons can be
// tested against a fake tree on a machine that has only one of the two.
#ifndef SANDBOX_LINUX_CGROUP_INTERNAL_H_
#define SANDBOX_LINUX_CGROUP_INTERNAL_H_

#include <functional>
#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "sandbox/linux/cgroup.h"

namespace sandbox::linux_layers::internal {

// The lines "N:controllers:/path" of /proc/<pid>/cgroup as controller -> path; the v2 line
// ("0::/path", no controllers) as "" -> path. Lines that are not three fields are skipped.
std::map<std::string, std::string> ParseProcCgroup(absl::string_view text);

// Where to look. The defaults are the real machine's.
struct CgroupHost {
  std::string root = "/sys/fs/cgroup";
  std::string proc_self_cgroup = "/proc/self/cgroup";
  // Whether `path` is a cgroup2 mount; unset means statfs's f_type.
  std::function<bool(const std::string&)> is_cgroup2;

  bool IsCgroup2(const std::string& path) const;
};

struct V2Location {
  std::string dir;      // Our own v2 cgroup, with memory and pids delegated; empty if unusable.
  std::string why_not;  // Why not, when `dir` is empty.
};
V2Location FindV2(const CgroupHost& host);

struct V1Location {
  std::map<std::string, std::string> dirs;  // Controller -> our own cgroup in its hierarchy.
  std::string why_not;                      // Non-empty if memory or pids is missing.
};
V1Location FindV1(const CgroupHost& host);

// v2 when FindV2 finds it, else v1, else none; the reason names what was missing.
CgroupProbe ProbeCgroups(const CgroupHost& host);

}  // namespace sandbox::linux_layers::internal

#endif  // SANDBOX_LINUX_CGROUP_INTERNAL_H_

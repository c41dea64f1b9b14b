// isolation.h on Linux: probes each layer, prepares the chosen ones in the parent, and hands their
// child steps to the runner through its PlanExtension hook (child_plan.h phases kIsolate and
// kConfine), then cleans up the cgroup and reads its verdict after the run.
#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "sandbox/child_plan.h"
#include "sandbox/errors.h"
#include "sandbox/isolation.h"
#include "sandbox/linux/capabilities.h"
#include "sandbox/linux/cgroup.h"
#include "sandbox/linux/landlock.h"
#include "sandbox/linux/namespaces.h"
#include "sandbox/linux/reaper.h"
#include "sandbox/linux/seccomp.h"
#include "sandbox/linux/system_headers.h"
#include "sandbox/status_macros.h"

namespace sandbox {
namespace {

using linux_layers::LayerStep;

std::string ReadSysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  return (in >> value) ? value : "absent";
}

// The namespace flag a layer probes, alone or on top of a user namespace when that works.
absl::Status ProbeOneNamespace(Layer layer, bool with_user) {
  linux_layers::NamespaceOptions o;
  o.user = with_user || layer == Layer::kUserNs;
  o.mount = layer == Layer::kMountNs;
  o.pid = layer == Layer::kPidNs;
  o.net = layer == Layer::kNetNs;
  o.ipc = layer == Layer::kIpcNs;
  o.uts = layer == Layer::kUtsNs;
  return linux_layers::ProbeNamespaces(o);
}

// Whether this process's root directory is a mount point. Inside a chroot onto a plain directory it
// is not, and the mount namespace setup cannot make "/" private (mount(2) answers EINVAL); such a root
// would need pivot_root onto a fresh tmpfs, which this layer does not do. /proc/self/mountinfo lists
// mount points relative to the process root, so "/" appears only when the root is one.
bool RootIsMountPoint() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // "<id> <parent> <major:minor> <root> <mount point> ..."
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point;
    if ((fields >> id >> parent >> dev >> root >> mount_point) && mount_point == "/") return true;
  }
  return false;
}

// The mount namespace setup uses the new mount API (open_tree/move_mount 5.2, mount_setattr 5.12).
std::string MissingMountApi() {
  if (!RootIsMountPoint()) {
    return "the root directory is not a mount point (a chroot?), so it cannot be made private";
  }
  long rc = syscall(__NR_mount_setattr, -1, "", 0, nullptr, 0);
  if (rc < 0 && errno == ENOSYS) return "mount_setattr(2) missing (Linux < 5.12)";
  rc = syscall(__NR_open_tree, -1, "", 0);
  if (rc < 0 && errno == ENOSYS) return "open_tree(2) missing (Linux < 5.2)";
  return "";
}

// Joining a cgroup (writing cgroup.procs) takes a lock whose write side waits for an RCU grace
// period, milliseconds per run, unless the hierarchy is mounted with favordynmods (Linux 6.0+).
std::string CgroupFavorDynmods() {
  std::ifstream in("/proc/self/mounts");
  std::string dev, dir, type, opts, rest;
  int with = 0, without = 0;
  while (in >> dev >> dir >> type >> opts && std::getline(in, rest)) {
    if (type != "cgroup" && type != "cgroup2") continue;
    (opts.find("favordynmods") != std::string::npos ? with : without)++;
  }
  if (with + without == 0) return "no cgroup mounts";
  if (without == 0) return "on";
  return absl::StrCat("off on ", without, " of ", with + without,
                      " cgroup mounts (each run waits an RCU grace period to join the cgroup; mount -o favordynmods)");
}

std::vector<LayerStatus> ComputeLayers() {
  std::vector<LayerStatus> out;
  absl::Status user = ProbeOneNamespace(Layer::kUserNs, false);
  out.push_back({Layer::kUserNs, user.ok(), user.ok() ? "unshare(CLONE_NEWUSER) works, own uid/gid mapped"
                                                      : std::string(user.message())});
  for (Layer layer : {Layer::kMountNs, Layer::kPidNs, Layer::kNetNs, Layer::kIpcNs, Layer::kUtsNs}) {
    absl::Status s = ProbeOneNamespace(layer, user.ok());
    std::string detail = s.ok() ? (user.ok() ? "inside the user namespace" : "as root, without a user namespace")
                                : std::string(s.message());
    bool ok = s.ok();
    if (ok && layer == Layer::kMountNs) {
      std::string missing = MissingMountApi();
      if (!missing.empty()) {
        ok = false;
        detail = missing;
      } else {
        detail = "workspace rw, rest read-only (mount_setattr), private /tmp";
      }
    }
    if (ok && layer == Layer::kNetNs) detail = "loopback only, down";
    out.push_back({layer, ok, detail});
  }
  linux_layers::CgroupProbe cg = linux_layers::ProbeCgroups();
  out.push_back({Layer::kCgroup, cg.mode != linux_layers::CgroupMode::kNone, cg.detail});
  absl::Status reaper = linux_layers::ProbeReaper();
  out.push_back({Layer::kReaper, reaper.ok(),
                 reaper.ok() ? "per-run subreaper waiter, pidfd kills" : std::string(reaper.message())});
  out.push_back({Layer::kCapabilities, true, "bounding set, securebits, ambient, capset"});
  out.push_back({Layer::kNoNewPrivs, true, "prctl(PR_SET_NO_NEW_PRIVS)"});
  std::string why;
  int abi = linux_layers::LandlockAbi(&why);
  out.push_back({Layer::kLandlock, abi > 0,
                 abi > 0 ? absl::StrCat("ABI ", abi, abi >= 4 ? ", TCP rights" : "", abi >= 6 ? ", IPC scoping" : "")
                         : why});
  bool seccomp_ok = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  out.push_back({Layer::kSeccomp, seccomp_ok,
                 seccomp_ok ? absl::StrCat("filter mode, libseccomp ", seccomp_version()->major, ".",
                                           seccomp_version()->minor, ".", seccomp_version()->micro)
                            : "kernel without CONFIG_SECCOMP_FILTER"});
  return out;
}

// Compiled once per (profile, network) and kept for the life of the process.
absl::StatusOr<const linux_layers::BpfProgram*> CachedFilter(SeccompProfileKind kind, bool network) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new std::map<std::pair<int, bool>, linux_layers::BpfProgram>();
  absl::MutexLock lock(&mu);
  auto key = std::make_pair(static_cast<int>(kind), network);
  auto it = cache->find(key);
  if (it == cache->end()) {
    linux_layers::SeccompOptions o{.allow_network = network};
    SB_ASSIGN_OR_RETURN(linux_layers::BpfProgram prog,
                        linux_layers::CompileProfile(kind == SeccompProfileKind::kStrict
                                                         ? linux_layers::StrictAllowlistProfile(o)
                                                         : linux_layers::DefaultDenylistProfile(o)));
    it = cache->emplace(key, std::move(prog)).first;
  }
  return &it->second;
}

// Everything prepared in the parent for one run; outlives the child (which reads it) and Run.
struct PreparedRun {
  std::optional<linux_layers::PreparedNamespaces> ns;
  std::unique_ptr<linux_layers::Cgroup> cgroup;
  std::optional<linux_layers::CapabilityDrop> caps;
  std::optional<linux_layers::PreparedLandlock> landlock;
  const linux_layers::BpfProgram* seccomp = nullptr;
  std::vector<std::pair<ChildPhase, LayerStep>> steps;
  std::vector<std::string> layers;
};

void AddSteps(PreparedRun& run, ChildPhase phase, const std::vector<LayerStep>& steps) {
  for (const LayerStep& s : steps) run.steps.push_back({phase, s});
}

template <size_t N>
void AddSteps(PreparedRun& run, ChildPhase phase, const std::array<LayerStep, N>& steps) {
  AddSteps(run, phase, std::vector<LayerStep>(steps.begin(), steps.end()));
}

// Prepares `apply` in the order of isolation.h. An error from a layer that is only enabled makes it
// unavailable (named in `unavailable`); from a required layer it fails the run.
absl::Status Prepare(const RunRequest& request, const IsolationOptions& iso, std::set<Layer> apply,
                     const std::set<Layer>& required, PreparedRun& run, std::vector<std::string>& unavailable) {
  auto degrade = [&](Layer layer, const absl::Status& why) -> absl::Status {
    if (required.count(layer)) return why;
    unavailable.push_back(absl::StrCat(LayerName(layer), ": ", why.message()));
    apply.erase(layer);
    return absl::OkStatus();
  };
  const std::string workspace = iso.workspace.empty() ? request.cwd : iso.workspace;
  if (apply.count(Layer::kNetNs) && iso.allow_network) {
    SB_RETURN_IF_ERROR(degrade(Layer::kNetNs, MakeError(ErrorCode::kEUNSUPPORTED, "network allowed by the request")));
  }
  if (apply.count(Layer::kCgroup)) {
    absl::StatusOr<std::unique_ptr<linux_layers::Cgroup>> cg =
        linux_layers::Cgroup::Create({iso.memory_bytes, iso.pids, iso.cpu_millis});
    if (cg.ok()) {
      run.cgroup = std::move(*cg);
      run.steps.push_back({ChildPhase::kIsolate, run.cgroup->JoinStep()});
      run.layers.push_back(run.cgroup->Describe());
    } else {
      SB_RETURN_IF_ERROR(degrade(Layer::kCgroup, cg.status()));
    }
  }
  linux_layers::NamespaceOptions nso;
  nso.user = apply.count(Layer::kUserNs) > 0;
  nso.mount = apply.count(Layer::kMountNs) > 0;
  nso.pid = apply.count(Layer::kPidNs) > 0;
  nso.net = apply.count(Layer::kNetNs) > 0;
  nso.ipc = apply.count(Layer::kIpcNs) > 0;
  nso.uts = apply.count(Layer::kUtsNs) > 0;
  nso.workspace = workspace;
  // Without root, every other namespace needs a user namespace to own it (the probes made them
  // inside one), so asking for any namespace brings the user namespace along.
  if (geteuid() != 0 && (nso.mount || nso.pid || nso.net || nso.ipc || nso.uts) && !nso.user) {
    bool user_ok = false;
    for (const LayerStatus& s : ProbeLayers()) user_ok |= s.layer == Layer::kUserNs && s.available;
    if (!user_ok) {
      return MakeError(ErrorCode::kEUNSUPPORTED, "namespaces need a user namespace when not root, and it is unavailable");
    }
    nso.user = true;
  }
  if (nso.user || nso.mount || nso.pid || nso.net || nso.ipc || nso.uts) {
    SB_ASSIGN_OR_RETURN(run.ns, linux_layers::PrepareNamespaces(nso));
    AddSteps(run, ChildPhase::kIsolate, linux_layers::IsolateSteps(*run.ns));
    for (std::string& name : linux_layers::NamespaceLayerNames(*run.ns)) run.layers.push_back(std::move(name));
  }
  // kConfine, in order: the process tree (pid-namespace init, or the subreaper waiter), then the
  // capability drop, no_new_privs, Landlock, seccomp.
  if (nso.pid) {
    AddSteps(run, ChildPhase::kConfine, linux_layers::PidNamespaceSteps(*run.ns));
    if (apply.count(Layer::kReaper)) run.layers.push_back("reaper(pidns_init)");
  } else if (apply.count(Layer::kReaper)) {
    run.steps.push_back({ChildPhase::kConfine, linux_layers::SubreaperStep()});
    run.layers.push_back("reaper(subreaper_waiter)");
  }
  if (apply.count(Layer::kCapabilities)) {
    SB_ASSIGN_OR_RETURN(run.caps, linux_layers::PrepareCapabilityDrop());
    AddSteps(run, ChildPhase::kConfine, linux_layers::DropCapabilitiesSteps(*run.caps));
    run.layers.push_back("caps");
  }
  // Landlock and an unprivileged seccomp filter require no_new_privs: asking for either implies it.
  if (apply.count(Layer::kNoNewPrivs) || apply.count(Layer::kLandlock) || apply.count(Layer::kSeccomp)) {
    run.steps.push_back({ChildPhase::kConfine, linux_layers::NoNewPrivsStep()});
    run.layers.push_back("nnp");
  }
  if (apply.count(Layer::kLandlock)) {
    linux_layers::LandlockPolicy policy;
    policy.read_write = {workspace, "/dev/null"};
    if (nso.mount) policy.read_write.push_back("/tmp");  // The private tmpfs, not the host's.
    policy.deny_tcp = !iso.allow_network;
    absl::StatusOr<linux_layers::PreparedLandlock> ll = linux_layers::PrepareLandlock(policy);
    if (ll.ok()) {
      run.landlock = std::move(*ll);
      AddSteps(run, ChildPhase::kConfine, linux_layers::LandlockSteps(*run.landlock));
      run.layers.push_back(linux_layers::DescribeLandlock(*run.landlock));
    } else {
      SB_RETURN_IF_ERROR(degrade(Layer::kLandlock, ll.status()));
    }
  }
  if (apply.count(Layer::kSeccomp)) {
    SB_ASSIGN_OR_RETURN(run.seccomp, CachedFilter(iso.seccomp_profile, iso.allow_network));
    run.steps.push_back({ChildPhase::kConfine, linux_layers::InstallFilterStep(*run.seccomp)});
    run.layers.push_back(absl::StrCat("seccomp(", run.seccomp->profile_name, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<LayerStatus> ProbeLayers() {
  static const auto* layers = new std::vector<LayerStatus>(ComputeLayers());
  return *layers;
}

DoctorReport Doctor() {
  DoctorReport report;
  utsname u;
  report.platform = uname(&u) == 0 ? absl::StrCat(u.sysname, " ", u.release, " ", u.machine) : "linux";
  report.layers = ProbeLayers();
  std::string why;
  int abi = linux_layers::LandlockAbi(&why);
  linux_layers::CgroupProbe cg = linux_layers::ProbeCgroups();
  report.facts = {
      {"euid", absl::StrCat(geteuid())},
      {"landlock_abi", abi > 0 ? absl::StrCat(abi) : absl::StrCat("0 (", why, ")")},
      {"cgroup_mode", linux_layers::CgroupModeName(cg.mode)},
      {"cgroup_detail", cg.detail},
      {"user.max_user_namespaces", ReadSysctl("/proc/sys/user/max_user_namespaces")},
      {"kernel.unprivileged_userns_clone", ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone")},
      {"kernel.apparmor_restrict_unprivileged_userns",
       ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")},
      {"cgroup_favordynmods", CgroupFavorDynmods()},
      {"kernel.io_uring_disabled", ReadSysctl("/proc/sys/kernel/io_uring_disabled")},
      {"dev.tty.legacy_tiocsti", ReadSysctl("/proc/sys/dev/tty/legacy_tiocsti")},
  };
  return report;
}

absl::StatusOr<RunResult> RunIsolated(const RunRequest& request, const IsolationOptions& isolation) {
  std::set<Layer> want = isolation.enabled;
  want.insert(isolation.required.begin(), isolation.required.end());
  std::vector<std::string> unavailable;
  std::set<Layer> apply;
  for (const LayerStatus& s : ProbeLayers()) {
    if (!want.count(s.layer)) continue;
    if (s.available) {
      apply.insert(s.layer);
    } else if (isolation.required.count(s.layer)) {
      return MakeError(ErrorCode::kEUNSUPPORTED, absl::StrCat("required isolation layer ", LayerName(s.layer),
                                                              " is unavailable: ", s.detail));
    } else {
      unavailable.push_back(absl::StrCat(LayerName(s.layer), ": ", s.detail));
    }
  }
  auto run = std::make_unique<PreparedRun>();
  SB_RETURN_IF_ERROR(Prepare(request, isolation, apply, isolation.required, *run, unavailable));
  PlanExtension extend = [&run](const RunRequest&, ChildPlan& plan) {
    // The layers' steps fork (pid-namespace init, subreaper waiter: the runner's direct child stays
    // behind as a waiter and never execs) and keep state in prepared memory (Landlock ruleset fd,
    // detached workspace mount): they need a forked child, not a vfork one that shares our memory
    // and blocks the runner until it execs.
    if (!run->steps.empty()) plan.RequireFork();
    for (const auto& [phase, step] : run->steps) plan.Add(phase, step.name, step.fn, step.arg);
    for (const std::string& layer : run->layers) plan.AddLayer(layer);
    return absl::OkStatus();
  };
  absl::StatusOr<RunResult> result = Run(request, extend);
  if (run->cgroup != nullptr) {
    linux_layers::CgroupStats stats = run->cgroup->Stats();
    absl::Status destroyed = run->cgroup->Destroy();  // Kills whatever escaped the process group.
    if (result.ok()) {
      // Any OOM kill in the run's cgroup counts: the victim may be one stage of a pipeline while
      // the shell above it exits 137, and the caller still needs to know the limit fired.
      result->memory_limit_killed = stats.oom_kills > 0;
      if (isolation.memory_bytes) result->limits_in_force.push_back(absl::StrCat("cgroup.memory=", *isolation.memory_bytes));
      if (isolation.pids) result->limits_in_force.push_back(absl::StrCat("cgroup.pids=", *isolation.pids));
      if (isolation.cpu_millis) result->limits_in_force.push_back(absl::StrCat("cgroup.cpu_millis=", *isolation.cpu_millis));
      if (!destroyed.ok()) return destroyed;
    }
  }
  if (result.ok()) result->layers_unavailable = std::move(unavailable);
  return result;
}

}  // namespace sandbox

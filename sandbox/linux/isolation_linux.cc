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

#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

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
#include "sandbox/linux/zygote.h"
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
  // For an isolation seed (zygote.h): the kConfine steps after the process tree but seccomp's (caps,
  // no_new_privs, Landlock), seccomp's, and which process tree the run has.
  std::vector<LayerStep> confine;
  std::vector<LayerStep> filter;
  int error_fd = -1;  // The runner's error pipe in the child (ChildPlan::error_fd), for the waiter.
  linux_layers::SeedTree tree = linux_layers::SeedTree::kDirect;
};

void AddSteps(PreparedRun& run, ChildPhase phase, const std::vector<LayerStep>& steps) {
  for (const LayerStep& s : steps) run.steps.push_back({phase, s});
}

// A kConfine step after the process tree: also recorded for a seed.
void AddConfine(PreparedRun& run, const LayerStep& step) {
  run.steps.push_back({ChildPhase::kConfine, step});
  run.confine.push_back(step);
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
    run.tree = linux_layers::SeedTree::kInit;
    if (apply.count(Layer::kReaper)) run.layers.push_back("reaper(pidns_init)");
  } else if (apply.count(Layer::kReaper)) {
    run.steps.push_back({ChildPhase::kConfine, linux_layers::SubreaperStep(&run.error_fd)});
    run.tree = linux_layers::SeedTree::kSubreaper;
    run.layers.push_back("reaper(subreaper_waiter)");
  }
  if (apply.count(Layer::kCapabilities)) {
    SB_ASSIGN_OR_RETURN(run.caps, linux_layers::PrepareCapabilityDrop());
    for (const LayerStep& step : linux_layers::DropCapabilitiesSteps(*run.caps)) AddConfine(run, step);
    run.layers.push_back("caps");
  }
  // Landlock and an unprivileged seccomp filter require no_new_privs: asking for either implies it.
  if (apply.count(Layer::kNoNewPrivs) || apply.count(Layer::kLandlock) || apply.count(Layer::kSeccomp)) {
    AddConfine(run, linux_layers::NoNewPrivsStep());
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
      for (const LayerStep& step : linux_layers::LandlockSteps(*run.landlock)) AddConfine(run, step);
      run.layers.push_back(linux_layers::DescribeLandlock(*run.landlock));
    } else {
      SB_RETURN_IF_ERROR(degrade(Layer::kLandlock, ll.status()));
    }
  }
  if (apply.count(Layer::kSeccomp)) {
    SB_ASSIGN_OR_RETURN(run.seccomp, CachedFilter(iso.seccomp_profile, iso.allow_network));
    run.steps.push_back({ChildPhase::kConfine, linux_layers::InstallFilterStep(*run.seccomp)});
    run.filter.push_back(linux_layers::InstallFilterStep(*run.seccomp));
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

namespace {

// The layers to apply: those wanted and available here. A required one that is unavailable fails
// closed; an enabled one is named in `unavailable`.
absl::Status ResolveLayers(const IsolationOptions& isolation, std::set<Layer>& apply,
                           std::vector<std::string>& unavailable) {
  std::set<Layer> want = isolation.enabled;
  want.insert(isolation.required.begin(), isolation.required.end());
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
  return absl::OkStatus();
}

// After the run: the cgroup's verdict into the result. Every process left in the cgroup is killed
// here (an escaped daemon); the directories are removed by `destroy` (now, or later off the run's
// latency by the isolation pool).
absl::Status FinishCgroup(linux_layers::Cgroup& cgroup, const IsolationOptions& isolation,
                          absl::StatusOr<RunResult>& result, bool destroy) {
  linux_layers::CgroupStats stats = cgroup.Stats();
  absl::Status ended = destroy ? cgroup.Destroy() : cgroup.KillAll();  // Kills whatever escaped the group.
  if (!result.ok()) return absl::OkStatus();
  // Any OOM kill in the run's cgroup counts: the victim may be one stage of a pipeline while the
  // shell above it exits 137, and the caller still needs to know the limit fired.
  result->memory_limit_killed = stats.oom_kills > 0;
  if (isolation.memory_bytes) result->limits_in_force.push_back(absl::StrCat("cgroup.memory=", *isolation.memory_bytes));
  if (isolation.pids) result->limits_in_force.push_back(absl::StrCat("cgroup.pids=", *isolation.pids));
  if (isolation.cpu_millis) result->limits_in_force.push_back(absl::StrCat("cgroup.cpu_millis=", *isolation.cpu_millis));
  return ended;
}

}  // namespace

absl::StatusOr<RunResult> RunIsolated(const RunRequest& request, const IsolationOptions& isolation) {
  std::vector<std::string> unavailable;
  std::set<Layer> apply;
  SB_RETURN_IF_ERROR(ResolveLayers(isolation, apply, unavailable));
  auto run = std::make_unique<PreparedRun>();
  SB_RETURN_IF_ERROR(Prepare(request, isolation, apply, isolation.required, *run, unavailable));
  PlanExtension extend = [&run](const RunRequest&, ChildPlan& plan) {
    // The layers' steps fork (pid-namespace init, subreaper waiter: the runner's direct child stays
    // behind as a waiter and never execs) and keep state in prepared memory (Landlock ruleset fd,
    // detached workspace mount): they need a forked child, not a vfork one that shares our memory
    // and blocks the runner until it execs.
    if (!run->steps.empty()) plan.RequireFork();
    run->error_fd = plan.error_fd();
    for (const auto& [phase, step] : run->steps) plan.Add(phase, step.name, step.fn, step.arg);
    for (const std::string& layer : run->layers) plan.AddLayer(layer);
    return absl::OkStatus();
  };
  absl::StatusOr<RunResult> result = Run(request, extend);
  if (run->cgroup != nullptr) SB_RETURN_IF_ERROR(FinishCgroup(*run->cgroup, isolation, result, /*destroy=*/true));
  if (result.ok()) result->layers_unavailable = std::move(unavailable);
  return result;
}

// ---------------------------------------------------------------------------------------------
// IsolationPool: one seed (zygote.h) prepared ahead of each run by a background thread.

namespace {

// One prepared run: the layers' objects (which the seed's steps read: they must live until the
// seed has started, and the cgroup until the run is over) and the seed itself.
struct PreparedSeed {
  std::unique_ptr<PreparedRun> run;  // Declared first: destroyed after the seed is reaped.
  std::vector<std::string> unavailable;
  absl::Status status;               // Why no seed could be prepared (a required layer's error).
  std::unique_ptr<linux_layers::Seed> seed;
};

std::unique_ptr<PreparedSeed> PrepareSeed(const IsolationOptions& iso, const std::string& workspace,
                                          const std::set<Layer>& apply, const std::vector<std::string>& unavailable) {
  auto out = std::make_unique<PreparedSeed>();
  out->unavailable = unavailable;
  out->run = std::make_unique<PreparedRun>();
  RunRequest base;
  base.cwd = workspace;
  out->status = Prepare(base, iso, apply, iso.required, *out->run, out->unavailable);
  if (!out->status.ok()) return out;
  PreparedRun& run = *out->run;
  linux_layers::SeedPlan plan;
  if (run.ns.has_value()) {
    plan.clone_flags = run.ns->unshare_flags;
    plan.prepare = linux_layers::SetupSteps(*run.ns);
  }
  if (run.cgroup != nullptr) {
    plan.prepare.push_back(run.cgroup->JoinStep());
    plan.keep_fds = run.cgroup->procs_fds();
  }
  plan.tree = run.tree;
  // The seed is pid 1 of the run's pid namespace: it mounts the namespace's /proc before the run.
  if (run.tree == linux_layers::SeedTree::kInit && run.ns->options.mount) {
    plan.prepare.push_back(linux_layers::MountProcStep());
  }
  // The capability drop, no_new_privs and Landlock are inherited across fork: the seed applies them
  // to itself before the run (it needs no privilege after its mounts), and the command installs
  // only the seccomp filter, last, as the per-run path does.
  for (const LayerStep& step : run.confine) plan.prepare.push_back(step);
  plan.confine = run.filter;
  absl::StatusOr<std::unique_ptr<linux_layers::Seed>> seed = linux_layers::StartSeed(plan);
  if (!seed.ok()) {
    out->status = seed.status();
    return out;
  }
  out->status = (*seed)->WaitReady();
  out->seed = std::move(*seed);
  return out;
}

size_t RequestBytes(const RunRequest& request, size_t* strings) {
  size_t bytes = request.cwd.size() + 1 + PATH_MAX;  // The resolved program path, at most PATH_MAX.
  *strings = request.argv.size();
  for (const std::string& a : request.argv) bytes += a.size() + 1;
  if (request.env.has_value()) {
    *strings += request.env->size();
    for (const auto& [k, v] : *request.env) bytes += k.size() + v.size() + 2;
  } else {
    *strings += 3;
    bytes += 2 * request.cwd.size() + 256;  // DefaultEnvironment.
  }
  return bytes;
}

}  // namespace

struct IsolationPool::Impl {
  explicit Impl(IsolationOptions o) : options(std::move(o)) {}

  // The background thread: keeps one seed ready and removes finished runs' cgroups.
  void Work() {
    absl::MutexLock lock(&mu);
    while (true) {
      mu.Await(absl::Condition(+[](Impl* self) {
        return self->stop || !self->retired.empty() ||
               (self->configured && self->ready == nullptr && (self->running == 0 || self->waiting > 0) &&
                !self->failed);
      }, this));
      if (stop) return;
      if (!retired.empty()) {
        std::vector<std::unique_ptr<PreparedRun>> done;
        done.swap(retired);
        mu.Unlock();
        for (auto& run : done) {
          if (run->cgroup != nullptr) run->cgroup->Destroy().IgnoreError();  // Empty already: KillAll ran.
        }
        done.clear();
        mu.Lock();
        continue;
      }
      mu.Unlock();
      std::unique_ptr<PreparedSeed> next = PrepareSeed(options, workspace, apply, unavailable);
      mu.Lock();
      failed = !next->status.ok();  // Not retried until a run takes the failure.
      ready = std::move(next);
    }
  }

  const IsolationOptions options;
  absl::Mutex mu;
  bool configured ABSL_GUARDED_BY(mu) = false;
  bool stop ABSL_GUARDED_BY(mu) = false;
  bool failed ABSL_GUARDED_BY(mu) = false;
  // Runs in progress. The next seed is started when none is: preparing it (clone, mounts, a cgroup
  // migration) while a run is in progress would compete with it for the CPU.
  int running ABSL_GUARDED_BY(mu) = 0;
  int waiting ABSL_GUARDED_BY(mu) = 0;  // Runs blocked for a seed: one is prepared at once for them.
  std::string workspace;  // Set once, with apply and unavailable, before `configured`.
  std::set<Layer> apply;
  std::vector<std::string> unavailable;
  std::unique_ptr<PreparedSeed> ready ABSL_GUARDED_BY(mu);
  std::vector<std::unique_ptr<PreparedRun>> retired ABSL_GUARDED_BY(mu);
  std::thread worker;
};

IsolationPool::IsolationPool(IsolationOptions options) : impl_(new Impl(std::move(options))) {}

IsolationPool::~IsolationPool() {
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->stop = true;
  }
  if (impl_->worker.joinable()) impl_->worker.join();
  impl_->ready.reset();  // The unused seed exits on EOF and is reaped, then its cgroup removed.
  impl_->retired.clear();
}

void IsolationPool::WaitIdle() {
  absl::MutexLock lock(&impl_->mu);
  impl_->mu.Await(absl::Condition(+[](Impl* self) {
    return !self->configured || (self->ready != nullptr && self->retired.empty());
  }, impl_.get()));
}

absl::StatusOr<RunResult> IsolationPool::Run(const RunRequest& request) {
  Impl& p = *impl_;
  const std::string workspace = p.options.workspace.empty() ? request.cwd : p.options.workspace;
  size_t strings = 0;
  const size_t bytes = RequestBytes(request, &strings);
  std::unique_ptr<PreparedSeed> prepared;
  {
    absl::MutexLock lock(&p.mu);
    if (!p.configured) {
      std::set<Layer> apply;
      std::vector<std::string> unavailable;
      SB_RETURN_IF_ERROR(ResolveLayers(p.options, apply, unavailable));
      if (apply.empty()) return RunIsolated(request, p.options);  // Nothing to prepare.
      p.workspace = workspace;
      p.apply = std::move(apply);
      p.unavailable = std::move(unavailable);
      p.configured = true;
      p.worker = std::thread([&p] { p.Work(); });
    }
    if (workspace != p.workspace || !linux_layers::FitsSeed(bytes, strings)) {
      // Another workspace, or too large for a seed: the per-run path (outside the lock).
    } else {
      ++p.waiting;
      p.mu.Await(absl::Condition(+[](Impl* self) { return self->ready != nullptr; }, &p));
      --p.waiting;
      prepared = std::move(p.ready);
      p.failed = false;
      ++p.running;
    }
  }
  if (prepared == nullptr) return RunIsolated(request, p.options);
  if (!prepared->status.ok()) {
    absl::MutexLock lock(&p.mu);
    --p.running;
    return prepared->status;
  }

  PreparedRun& run = *prepared->run;
  PlanExtension extend = [&](const RunRequest&, ChildPlan& plan) {
    plan.SetLauncher(prepared->seed->launcher());
    for (const std::string& layer : run.layers) plan.AddLayer(layer);
    plan.AddLayer("prepared_seed");
    return absl::OkStatus();
  };
  absl::StatusOr<RunResult> result = sandbox::Run(request, extend);
  absl::Status finished = absl::OkStatus();
  if (run.cgroup != nullptr) finished = FinishCgroup(*run.cgroup, p.options, result, /*destroy=*/false);
  prepared->seed.reset();  // Reaped by the runner already (or now, if the run failed to start).
  {
    absl::MutexLock lock(&p.mu);
    p.retired.push_back(std::move(prepared->run));  // The cgroup's rmdir, off the run's latency.
    --p.running;
  }
  SB_RETURN_IF_ERROR(finished);
  if (result.ok()) result->layers_unavailable = std::move(prepared->unavailable);
  return result;
}

}  // namespace sandbox

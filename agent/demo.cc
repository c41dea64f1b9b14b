#include "agent/demo.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "agent/builtin_tools.h"
#include "agent/demo_project.h"
#include "agent/registry.h"
#include "sandbox/errors.h"
#include "sandbox/isolation.h"
#include "sandbox/status_macros.h"
#include "sandbox/workspace.h"

namespace agent {
namespace {

using sandbox::ErrorCode;
using sandbox::MakeError;

// Writes a file outside any workspace (the escape target), with plain POSIX calls: the agent never
// touches it; only the demo's setup does.
absl::Status WriteOutsideFile(const std::string& path, absl::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return sandbox::ErrnoError(errno, absl::StrCat("open(", path, ")"));
  ssize_t n = ::write(fd, data.data(), data.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(data.size())) {
    return sandbox::ErrnoError(n < 0 ? err : EIO, absl::StrCat("write(", path, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MakeFreshDemoDir(std::string* base_out) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp",
                                     "/agent-demo-XXXXXX");
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return sandbox::ErrnoError(errno, absl::StrCat("mkdtemp(", pattern, ")"));
  }
  std::string base = buf.data();
  if (base_out != nullptr) *base_out = base;
  std::string ws = base + "/workspace";
  if (::mkdir(ws.c_str(), 0755) != 0) return sandbox::ErrnoError(errno, absl::StrCat("mkdir(", ws, ")"));
  SB_RETURN_IF_ERROR(WriteOutsideFile(
      base + "/secret.txt", "the demo's secret: escape mode must never read this line\n"));
  return ws;
}

// An existing directory may be reused only if it holds nothing but the demo's own files.
absl::Status CheckReusable(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return sandbox::ErrnoError(errno, absl::StrCat("opendir(", dir, ")"));
  absl::Status status = absl::OkStatus();
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || name == kDemoSourcePath || name == kDemoTestPath ||
        name == kAgentDir) {
      continue;
    }
    status = MakeError(ErrorCode::kEINVAL,
                       absl::StrCat("refusing to set up the demo in ", dir, ": it holds '", name,
                                    "', so it is not an empty or demo directory"));
    break;
  }
  ::closedir(d);
  return status;
}

}  // namespace

absl::StatusOr<std::string> PrepareDemoWorkspace(const std::string& dir, std::string* fresh_dir) {
  std::string ws_dir = dir;
  if (ws_dir.empty()) {
    SB_ASSIGN_OR_RETURN(ws_dir, MakeFreshDemoDir(fresh_dir));
  } else if (::mkdir(ws_dir.c_str(), 0755) != 0) {
    if (errno != EEXIST) return sandbox::ErrnoError(errno, absl::StrCat("mkdir(", ws_dir, ")"));
    SB_RETURN_IF_ERROR(CheckReusable(ws_dir));
  }
  SB_ASSIGN_OR_RETURN(sandbox::Workspace ws, sandbox::Workspace::Open(ws_dir, AgentWorkspaceOptions()));
  SB_RETURN_IF_ERROR(ws.WriteFileAtomic(kDemoSourcePath, kDemoSource));
  SB_RETURN_IF_ERROR(ws.WriteFileAtomic(kDemoTestPath, kDemoTest));
  return ws.root();
}

absl::Status RemoveTree(const std::string& dir) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    return sandbox::ErrnoError(errno, absl::StrCat("lstat(", dir, ")"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kEINVAL, absl::StrCat("refusing to remove ", dir, ": not a directory"));
  }
  // Depth first, physical (a symlink is unlinked, never followed), on one filesystem.
  static thread_local std::string first_error;
  first_error.clear();
  int rc = ::nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int type, struct FTW*) -> int {
        int r = (type == FTW_DP) ? ::rmdir(path) : ::unlink(path);
        if (r != 0 && first_error.empty()) {
          first_error = absl::StrCat(type == FTW_DP ? "rmdir(" : "unlink(", path, "): ",
                                     std::strerror(errno));
        }
        return 0;  // Go on: remove what can be removed, report the first failure.
      },
      16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
  if (rc != 0) return sandbox::ErrnoError(errno, absl::StrCat("nftw(", dir, ")"));
  if (!first_error.empty()) return MakeError(ErrorCode::kEIO, first_error);
  return absl::OkStatus();
}

absl::StatusOr<DemoResult> RunDemo(const DemoOptions& options) {
  // Declared first, so it runs last: after the pool, the registry and the trace are gone. It also
  // covers a setup that fails half way.
  std::string fresh_dir;
  absl::Cleanup remove_fresh = [&] {
    if (fresh_dir.empty() || options.keep_workspace) return;
    if (absl::Status s = RemoveTree(fresh_dir); !s.ok()) {
      std::fprintf(stderr, "run_demo: could not remove the demo directory: %s\n",
                   std::string(s.message()).c_str());
    }
  };
  SB_ASSIGN_OR_RETURN(std::string ws_dir, PrepareDemoWorkspace(options.workspace_dir, &fresh_dir));
  SB_ASSIGN_OR_RETURN(sandbox::Workspace ws, sandbox::Workspace::Open(ws_dir, AgentWorkspaceOptions()));

  ToolEnv env;
  env.workspace = &ws;
  env.test.argv = {"/bin/sh", kDemoTestPath};
  env.test.timeout = options.test_timeout;
  Registry registry(env, BuiltinScopes());
  BuiltinToolOptions tool_options;
  if (!options.isolate.empty()) {
    SB_ASSIGN_OR_RETURN(std::set<sandbox::Layer> layers, sandbox::ParseLayerList(options.isolate));
    sandbox::IsolationOptions isolation;
    isolation.enabled = std::move(layers);
    isolation.workspace = ws.root();
    // The agent runs many commands in one workspace: one pool prepares each run's isolated
    // process while the loop thinks, so a run pays ~0.3 x bwrap instead of the full setup
    // (sandbox/linux/README.md). Nothing is shared between runs.
    auto pool = std::make_shared<sandbox::IsolationPool>(std::move(isolation));
    tool_options.run = [pool](const sandbox::RunRequest& request) { return pool->Run(request); };
  }
  SB_RETURN_IF_ERROR(RegisterBuiltinTools(registry, tool_options));

  SB_ASSIGN_OR_RETURN(TraceWriter trace, TraceWriter::Open(options.trace_path, !options.append_trace));

  State state;
  state.task.goal = kDemoGoal;
  state.control.max_steps = options.max_steps;
  state.control.max_tool_calls = options.max_tool_calls;
  ScriptedPolicy policy(options.mode);

  LoopOptions loop;
  loop.list_files = [&ws]() -> absl::StatusOr<std::vector<std::string>> {
    SB_ASSIGN_OR_RETURN(std::vector<sandbox::FileEntry> entries, ws.ListFiles());
    std::vector<std::string> paths;
    for (const sandbox::FileEntry& e : entries) paths.push_back(e.path);
    return paths;
  };
  loop.header = {{"workspace", ws.root()}, {"test_command", env.test.argv}};

  DemoResult result;
  result.summary = RunLoop(registry, policy, state, &trace, loop);
  result.workspace = ws.root();
  result.trace_path = options.trace_path;
  if (options.keep_workspace) result.kept_dir = fresh_dir;
  return result;
}

}  // namespace agent

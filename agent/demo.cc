#include "agent/demo.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <set>
#include <memory>
#include <string>
#include <vector>

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

absl::StatusOr<std::string> MakeFreshDemoDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp",
                                     "/agent-demo-XXXXXX");
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return sandbox::ErrnoError(errno, absl::StrCat("mkdtemp(", pattern, ")"));
  }
  std::string base = buf.data();
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

absl::StatusOr<std::string> PrepareDemoWorkspace(const std::string& dir) {
  std::string ws_dir = dir;
  if (ws_dir.empty()) {
    SB_ASSIGN_OR_RETURN(ws_dir, MakeFreshDemoDir());
  } else if (::mkdir(ws_dir.c_str(), 0755) != 0) {
    if (errno != EEXIST) return sandbox::ErrnoError(errno, absl::StrCat("mkdir(", ws_dir, ")"));
    SB_RETURN_IF_ERROR(CheckReusable(ws_dir));
  }
  SB_ASSIGN_OR_RETURN(sandbox::Workspace ws, sandbox::Workspace::Open(ws_dir, AgentWorkspaceOptions()));
  SB_RETURN_IF_ERROR(ws.WriteFileAtomic(kDemoSourcePath, kDemoSource));
  SB_RETURN_IF_ERROR(ws.WriteFileAtomic(kDemoTestPath, kDemoTest));
  return ws.root();
}

absl::StatusOr<DemoResult> RunDemo(const DemoOptions& options) {
  SB_ASSIGN_OR_RETURN(std::string ws_dir, PrepareDemoWorkspace(options.workspace_dir));
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
  return result;
}

}  // namespace agent

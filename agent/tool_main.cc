// bazel run //agent:tool -- --workspace=DIR TOOL ['{"json": "args"}']
//
// Runs one tool call through the same registry the agent uses (scope -> schema -> precondition ->
// handler) and prints the result envelope. For debugging, scripting and red-team work. Exit status:
// 0 when the envelope is ok, 1 when it carries an error, 2 for bad flags, arguments or JSON.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/builtin_tools.h"
#include "agent/cli_flags.h"
#include "agent/registry.h"
#include "agent/state.h"
#include "nlohmann/json.hpp"
#include "sandbox/isolation.h"
#include "sandbox/workspace.h"

namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "tool: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  agent::FlagParser flags(
      "tool --workspace=DIR [--scopes=LIST] [--test-command=CMD] [--isolate=LAYERS] [--list] TOOL "
      "[JSON_ARGS]",
      "Calls one agent tool (fs.read, fs.read_range, fs.list, patch.apply, test.run, task.finish)\n"
      "through the agent's registry on DIR and prints the result envelope. JSON_ARGS defaults to {}.\n"
      "Each call starts from a fresh state, so task.finish is always refused (no passing test.run\n"
      "in this session). --list prints the tool descriptions instead. Example:\n"
      "  bazel run //agent:tool -- --workspace=/tmp/ws fs.read '{\"path\": \"calc.sh\"}'");
  flags.AddString("workspace", "", "the workspace root (required)");
  flags.AddString("scopes", "workspace:read,workspace:write,exec:test,task:finish",
                  "comma-separated auth scopes granted to the call");
  flags.AddString("test-command", "/bin/sh test.sh",
                  "test.run's command, split into words as a shell would ('...', \"...\", \\), "
                  "run without one: nothing is expanded");
  flags.AddInt("test-timeout-s", 60, "wall-clock timeout of test.run, seconds");
  flags.AddBool("list", "print the registered tools with their schemas and exit");
  flags.AddString("isolate", "",
                  "kernel isolation layers for test.run: all, or a list such as landlock,seccomp "
                  "(applied where available, named in the result where not); empty: none");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv);
  if (!positional.ok()) return Usage(std::string(positional.status().message()));
  if (flags.help()) {
    std::fputs(flags.Usage().c_str(), stdout);
    return 0;
  }
  if (flags.GetString("workspace").empty()) return Usage("--workspace=DIR is required");
  int64_t timeout = flags.GetInt("test-timeout-s");
  if (timeout <= 0 || timeout > 86400) return Usage("--test-timeout-s must be in 1..86400");
  if (!flags.GetBool("list")) {
    if (positional->empty()) return Usage("missing the tool name (try --help or --list)");
    if (positional->size() > 2) return Usage("too many arguments: give TOOL and one JSON object");
  }
  absl::StatusOr<std::vector<std::string>> test_argv =
      agent::SplitCommandWords(flags.GetString("test-command"));
  if (!test_argv.ok()) return Usage(absl::StrCat("--test-command: ", test_argv.status().message()));
  nlohmann::json args = nlohmann::json::object();
  if (positional->size() == 2) {
    args = nlohmann::json::parse((*positional)[1], nullptr, /*allow_exceptions=*/false);
    if (args.is_discarded()) {
      return Usage(absl::StrCat("JSON_ARGS is not valid JSON: ", (*positional)[1]));
    }
  }

  absl::StatusOr<sandbox::Workspace> ws = sandbox::Workspace::Open(
      agent::ResolveUserPath(flags.GetString("workspace")), agent::AgentWorkspaceOptions());
  if (!ws.ok()) return Usage(absl::StrCat("--workspace: ", ws.status().message()));

  agent::ToolEnv env;
  env.workspace = &*ws;
  env.test.argv = *std::move(test_argv);
  env.test.timeout = absl::Seconds(timeout);
  std::set<std::string> scopes;
  for (absl::string_view s : absl::StrSplit(flags.GetString("scopes"), ',', absl::SkipEmpty())) {
    scopes.emplace(s);
  }
  absl::StatusOr<std::set<sandbox::Layer>> layers = sandbox::ParseLayerList(flags.GetString("isolate"));
  if (!layers.ok()) return Usage(absl::StrCat("--isolate: ", layers.status().message()));
  agent::BuiltinToolOptions tool_options;
  if (!layers->empty()) {
    sandbox::IsolationOptions isolation;
    isolation.enabled = *layers;
    isolation.workspace = ws->root();
    tool_options.run = [isolation](const sandbox::RunRequest& request) {
      return sandbox::RunIsolated(request, isolation);
    };
  }
  agent::Registry registry(env, scopes);
  if (absl::Status s = agent::RegisterBuiltinTools(registry, tool_options); !s.ok()) {
    std::fprintf(stderr, "tool: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (flags.GetBool("list")) {
    std::printf("%s\n", registry.Describe().dump(2).c_str());
    return 0;
  }
  agent::State state;
  nlohmann::json envelope = registry.Call(state, (*positional)[0], args);
  std::printf("%s\n",
              envelope.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return envelope.value("ok", false) ? 0 : 1;
}

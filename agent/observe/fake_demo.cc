// mutation: skip-file(test support: in-memory demo tools for recording trace fixtures, testonly)
#include "agent/observe/fake_demo.h"

#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/demo_project.h"
#include "agent/registry.h"
#include "agent/sha256.h"
#include "agent/trace.h"
#include "sandbox/errors.h"

namespace agent::observe {

using nlohmann::json;
using sandbox::ErrorCode;
using sandbox::MakeError;

namespace {

struct FakeWorld {
  std::string source = kDemoSource;
  bool tests_fail = false;
  std::string test_stdout;
};

absl::Status AddTool(Registry& registry, std::string name, std::string scope, ToolHandler handler,
                     ToolPrecondition precondition = nullptr) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "in-memory stand-in of the demo tool";
  spec.auth_scope = std::move(scope);
  spec.handler = std::move(handler);
  spec.precondition = std::move(precondition);
  spec.cost = {{"units", 1}};
  return registry.Register(std::move(spec));
}

absl::Status RegisterFakeTools(Registry& registry, std::shared_ptr<FakeWorld> world) {
  absl::Status s = AddTool(
      registry, "fs.read", "workspace:read",
      [world](ToolContext&, const json& args) -> absl::StatusOr<ToolOutput> {
        const std::string path = args.value("path", "");
        if (absl::StartsWith(path, "../") || absl::StartsWith(path, "/")) {
          return MakeError(ErrorCode::kEPERM,
                           absl::StrCat("path '", path, "' leaves the workspace root"));
        }
        if (path != kDemoSourcePath) {
          return MakeError(ErrorCode::kENOENT, absl::StrCat(path, ": no such file"));
        }
        ToolOutput out;
        out.data = {{"path", path},
                    {"content", world->source},
                    {"bytes", world->source.size()},
                    {"sha256", Sha256Hex(world->source)}};
        out.refs.push_back({path, Sha256Hex(world->source)});
        return out;
      });
  if (!s.ok()) return s;
  s = AddTool(registry, "patch.apply", "workspace:write",
              [world](ToolContext& ctx, const json& args) -> absl::StatusOr<ToolOutput> {
                const std::string old_text = args.value("old", "");
                size_t at = world->source.find(old_text);
                if (old_text.empty() || at == std::string::npos) {
                  return MakeError(ErrorCode::kENOMATCH, "the old text occurs nowhere");
                }
                world->source.replace(at, old_text.size(), args.value("new", ""));
                uint64_t version = ++ctx.state.world.version;
                ToolOutput out;
                out.data = {{"path", args.value("path", "")},
                            {"replacements", 1},
                            {"world_version", version}};
                return out;
              });
  if (!s.ok()) return s;
  s = AddTool(registry, "test.run", "exec:test",
              [world](ToolContext&, const json&) -> absl::StatusOr<ToolOutput> {
                bool passed = !world->tests_fail &&
                              absl::StrContains(world->source, kDemoFixedLine);
                ToolOutput out;
                out.data = {{"exit_code", passed ? 0 : 1},
                            {"passed", passed},
                            {"timed_out", false},
                            {"stdout", absl::StrCat(passed ? "ok   add 2 3\n" : "FAIL add 2 3\n",
                                                    world->test_stdout)},
                            {"stderr", ""}};
                out.cost = {{"wall_ms", 12.5}, {"cpu_ms", 3.0}};
                return out;
              });
  if (!s.ok()) return s;
  return AddTool(
      registry, "task.finish", "task:finish",
      [](ToolContext& ctx, const json& args) -> absl::StatusOr<ToolOutput> {
        ctx.state.task.done = true;
        ctx.state.task.answer = args.value("answer", "");
        ToolOutput out;
        out.data = {{"answer", *ctx.state.task.answer}, {"world_version", ctx.state.world.version}};
        return out;
      },
      [](const ToolContext& ctx, const json&) -> absl::Status {
        if (ctx.state.TestsPassedSinceLastWrite()) return absl::OkStatus();
        return MakeError(ErrorCode::kEPRECONDITION, "no passing test.run since the last write");
      });
}

}  // namespace

absl::StatusOr<RunSummary> RecordFakeDemo(const FakeDemoOptions& options,
                                          const std::string& trace_path) {
  auto world = std::make_shared<FakeWorld>();
  world->tests_fail = options.tests_fail;
  world->test_stdout = options.test_stdout;
  Registry registry(ToolEnv{},
                    {"workspace:read", "workspace:write", "exec:test", "task:finish"});
  if (absl::Status s = RegisterFakeTools(registry, world); !s.ok()) return s;
  // A fixed clock: every observed_at is 2026-11-30T12:00:0N.000Z, N the call number.
  auto calls = std::make_shared<int>(0);
  registry.set_clock([calls] {
    return absl::FromUnixSeconds(1796040000) + absl::Seconds(++*calls);
  });
  absl::StatusOr<TraceWriter> trace = TraceWriter::Open(trace_path, /*truncate=*/false);
  if (!trace.ok()) return trace.status();
  ScriptedPolicy policy(options.mode);
  State state;
  state.task.goal = kDemoGoal;
  state.control.max_steps = options.max_steps;
  state.control.max_tool_calls = options.max_tool_calls;
  LoopOptions loop;
  loop.run_id = options.run_id;
  loop.header = {{"workspace", "/nonexistent/fake-demo-workspace"}};
  loop.list_files = []() -> absl::StatusOr<std::vector<std::string>> {
    return std::vector<std::string>{kDemoSourcePath, kDemoTestPath};
  };
  return RunLoop(registry, policy, state, &*trace, loop);
}

}  // namespace agent::observe

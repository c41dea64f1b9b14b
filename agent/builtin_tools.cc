#include "agent/builtin_tools.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "agent/sha256.h"
#include "sandbox/errors.h"
#include "sandbox/quote.h"
#include "sandbox/runner.h"
#include "sandbox/status_macros.h"
#include "sandbox/workspace.h"

namespace agent {
namespace {

using nlohmann::json;
using sandbox::ErrorCode;
using sandbox::MakeError;

constexpr uint64_t kDefaultRangeBytes = 64 << 10;
constexpr int kDefaultRangeLines = 200;
constexpr uint64_t kLineScanLimit = 64ull << 20;  // Line ranges look this far into a file at most.
constexpr size_t kMaxListed = 2000;

absl::StatusOr<const sandbox::Workspace*> WorkspaceOf(const ToolContext& ctx) {
  if (ctx.env.workspace == nullptr) {
    return MakeError(ErrorCode::kEINTERNAL, "no workspace is configured for this registry");
  }
  return ctx.env.workspace;
}

// The longest prefix of `s` of at most `n` bytes that does not split a UTF-8 sequence.
size_t CountLines(absl::string_view s) {
  size_t n = static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
  return (!s.empty() && s.back() != '\n') ? n + 1 : n;
}

// Occurrences of `needle` in `hay`, overlapping ones included ("aa" occurs twice in "aaa"): a
// replacement is unique only if no other placement of the old text exists at all.
size_t CountOccurrences(absl::string_view hay, absl::string_view needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != absl::string_view::npos; pos = hay.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

absl::Status WithReadRangeHint(absl::Status s) {
  if (s.ok() || sandbox::CodeOf(s) != ErrorCode::kEFBIG) return s;
  return MakeError(ErrorCode::kEFBIG,
                   absl::StrCat(s.message(), "; fs.read returns files up to ", kReadCap,
                                " bytes: use fs.read_range with offset/length or start_line/end_line"));
}

json StringSchema() { return {{"type", "string"}, {"minLength", 1}, {"maxLength", 4096}}; }

// ---- fs.read -------------------------------------------------------------------------------

absl::StatusOr<ToolOutput> FsRead(ToolContext& ctx, const json& args) {
  SB_ASSIGN_OR_RETURN(const sandbox::Workspace* ws, WorkspaceOf(ctx));
  const std::string path = args.at("path").get<std::string>();
  absl::StatusOr<std::string> content = ws->ReadFile(path, kReadCap);
  if (!content.ok()) return WithReadRangeHint(content.status());
  ToolOutput out;
  bool utf8 = sandbox::IsWellFormedUtf8(*content);
  out.data = {{"path", path},
              {"content", *content},
              {"bytes", content->size()},
              {"lines", CountLines(*content)},
              {"utf8", utf8}};
  out.refs.push_back({path, Sha256Hex(*content)});
  return out;
}

// ---- fs.read_range -------------------------------------------------------------------------

absl::StatusOr<ToolOutput> ReadBytes(const sandbox::Workspace& ws, const std::string& path,
                                     uint64_t offset, uint64_t length) {
  SB_ASSIGN_OR_RETURN(std::string content, ws.ReadRange(path, offset, length));
  ToolOutput out;
  out.data = {{"path", path},
              {"offset", offset},
              {"bytes", content.size()},
              {"eof", content.size() < length},
              {"content", content},
              {"utf8", sandbox::IsWellFormedUtf8(content)},
              {"sha256", Sha256Hex(content)}};
  return out;
}

absl::StatusOr<ToolOutput> ReadLines(const sandbox::Workspace& ws, const std::string& path,
                                     int64_t start_line, int64_t end_line) {
  std::string collected;
  int64_t line = 1;  // The line the next byte belongs to.
  uint64_t offset = 0;
  bool eof = false, done = false, truncated = false;
  char last = '\n';
  while (!eof && !done) {
    if (line < start_line && offset >= kLineScanLimit) {
      return MakeError(ErrorCode::kEFBIG,
                       absl::StrCat("line ", start_line, " of ", path, " lies beyond the first ",
                                    kLineScanLimit, " bytes; use offset/length"));
    }
    SB_ASSIGN_OR_RETURN(std::string chunk, ws.ReadRange(path, offset, kDefaultRangeBytes));
    eof = chunk.size() < kDefaultRangeBytes;
    offset += chunk.size();
    for (char c : chunk) {
      if (line >= start_line) {
        if (collected.size() >= kReadCap) {
          truncated = true;
          done = true;
          break;
        }
        collected.push_back(c);
      }
      last = c;
      if (c == '\n' && ++line > end_line) {
        done = true;
        break;
      }
    }
  }
  if (collected.empty()) {
    int64_t total = last == '\n' ? line - 1 : line;
    return MakeError(ErrorCode::kEINVAL, absl::StrCat(path, " has ", total, " lines; start_line ",
                                                      start_line, " is past the end"));
  }
  int64_t newlines = std::count(collected.begin(), collected.end(), '\n');
  int64_t returned_end = start_line + newlines - (collected.back() == '\n' ? 1 : 0);
  ToolOutput out;
  out.data = {{"path", path},
              {"start_line", start_line},
              {"end_line", returned_end},
              {"content", collected},
              {"truncated", truncated},
              {"eof", eof && !done},
              {"utf8", sandbox::IsWellFormedUtf8(collected)},
              {"sha256", Sha256Hex(collected)}};
  return out;
}

absl::StatusOr<ToolOutput> FsReadRange(ToolContext& ctx, const json& args) {
  SB_ASSIGN_OR_RETURN(const sandbox::Workspace* ws, WorkspaceOf(ctx));
  const std::string path = args.at("path").get<std::string>();
  bool bytes = args.contains("offset") || args.contains("length");
  bool lines = args.contains("start_line") || args.contains("end_line");
  if (bytes == lines) {
    return MakeError(ErrorCode::kEINVAL,
                     "give either offset/length (bytes) or start_line/end_line (lines), not both "
                     "and not neither");
  }
  if (bytes) {
    uint64_t offset = args.value("offset", uint64_t{0});
    uint64_t length = args.value("length", kDefaultRangeBytes);
    return ReadBytes(*ws, path, offset, length);
  }
  if (!args.contains("start_line")) {
    return MakeError(ErrorCode::kEINVAL, "a line range needs start_line");
  }
  int64_t start = args.at("start_line").get<int64_t>();
  int64_t end = args.value("end_line", start + kDefaultRangeLines - 1);
  if (end < start) {
    return MakeError(ErrorCode::kEINVAL,
                     absl::StrCat("end_line ", end, " is before start_line ", start));
  }
  return ReadLines(*ws, path, start, end);
}

// ---- fs.list -------------------------------------------------------------------------------

absl::StatusOr<ToolOutput> FsList(ToolContext& ctx, const json& args) {
  SB_ASSIGN_OR_RETURN(const sandbox::Workspace* ws, WorkspaceOf(ctx));
  std::string prefix;
  if (args.contains("prefix")) {
    SB_ASSIGN_OR_RETURN(prefix, ws->CheckRelative(args.at("prefix").get<std::string>()));
    if (prefix == ".") prefix.clear();
  }
  SB_ASSIGN_OR_RETURN(std::vector<sandbox::FileEntry> entries, ws->ListFiles());
  json files = json::array();
  size_t matched = 0;
  for (const sandbox::FileEntry& e : entries) {
    if (!prefix.empty() && e.path != prefix && e.path.rfind(prefix + "/", 0) != 0) continue;
    ++matched;
    if (files.size() < kMaxListed) files.push_back({{"path", e.path}, {"size", e.size}});
  }
  ToolOutput out;
  out.data = {{"files", files}, {"count", matched}, {"truncated", matched > files.size()}};
  return out;
}

// ---- patch.apply ---------------------------------------------------------------------------

absl::StatusOr<ToolOutput> PatchApply(ToolContext& ctx, const json& args) {
  SB_ASSIGN_OR_RETURN(const sandbox::Workspace* ws, WorkspaceOf(ctx));
  const std::string path = args.at("path").get<std::string>();
  const std::string old_text = args.at("old").get<std::string>();
  const std::string new_text = args.at("new").get<std::string>();
  if (old_text == new_text) {
    return MakeError(ErrorCode::kEINVAL, "old and new are identical: the patch changes nothing");
  }
  absl::StatusOr<std::string> content = ws->ReadFile(path, kReadCap);
  if (!content.ok()) return WithReadRangeHint(content.status());
  size_t count = CountOccurrences(*content, old_text);
  if (count == 0) {
    return MakeError(ErrorCode::kENOMATCH,
                     absl::StrCat("the old text occurs nowhere in ", path,
                                  "; read the file again and copy the text exactly"));
  }
  if (count > 1) {
    return MakeError(ErrorCode::kEAMBIGUOUS,
                     absl::StrCat("the old text occurs ", count, " times in ", path,
                                  "; include more surrounding context so it occurs once"));
  }
  std::string updated = *content;
  updated.replace(updated.find(old_text), old_text.size(), new_text);
  SB_RETURN_IF_ERROR(ws->WriteFileAtomic(path, updated));
  uint64_t version = ++ctx.state.world.version;
  ToolOutput out;
  out.data = {{"path", path},
              {"replacements", 1},
              {"sha256_before", Sha256Hex(*content)},
              {"world_version", version}};
  out.refs.push_back({path, Sha256Hex(updated)});
  return out;
}

// ---- test.run ------------------------------------------------------------------------------

absl::Status TestCommandConfigured(const ToolContext& ctx, const json&) {
  if (ctx.env.test.argv.empty()) {
    return MakeError(ErrorCode::kEPRECONDITION,
                     "no test command is configured for this workspace");
  }
  return absl::OkStatus();
}

std::string FormatLog(const TestCommand& cmd, const sandbox::RunResult& r) {
  std::string log = absl::StrCat("$ ", absl::StrJoin(cmd.argv, " "), "\n");
  absl::StrAppend(&log, "exit_code: ", r.exit_code ? std::to_string(*r.exit_code) : "none",
                  "  term_signal: ", r.term_signal ? std::to_string(*r.term_signal) : "none",
                  "  timed_out: ", r.timed_out ? "true" : "false", "\n");
  auto stream = [&](const char* name, const sandbox::StreamCapture& c) {
    absl::StrAppend(&log, "== ", name, " (", c.total_bytes, " bytes",
                    c.truncated ? absl::StrCat(", first ", c.data.size(), " kept") : "", ") ==\n",
                    c.data);
    if (!c.data.empty() && c.data.back() != '\n') log.push_back('\n');
  };
  stream("stdout", r.out);
  stream("stderr", r.err);
  return log;
}

absl::StatusOr<ToolOutput> TestRun(const ProcessRunner& run, ToolContext& ctx, const json&) {
  SB_ASSIGN_OR_RETURN(const sandbox::Workspace* ws, WorkspaceOf(ctx));
  const TestCommand& cmd = ctx.env.test;
  sandbox::RunRequest request;
  request.argv = cmd.argv;
  request.cwd = ws->root();
  request.wall_timeout = cmd.timeout;
  request.stdout_cap = cmd.log_cap;
  request.stderr_cap = cmd.log_cap;
  SB_ASSIGN_OR_RETURN(sandbox::RunResult r, run(request));

  const std::string log = FormatLog(cmd, r);
  const std::string log_sha = Sha256Hex(log);
  const std::string log_path = absl::StrCat(kTestLogDir, "/test-", log_sha.substr(0, 16), ".log");
  SB_RETURN_IF_ERROR(ws->WriteFileAtomic(log_path, log));

  absl::string_view out_head = sandbox::Utf8Head(r.out.data, cmd.output_cap);
  absl::string_view err_head = sandbox::Utf8Head(r.err.data, cmd.output_cap);
  bool truncated = r.out.truncated || r.err.truncated || out_head.size() < r.out.data.size() ||
                   err_head.size() < r.err.data.size();
  bool passed = r.exit_code.has_value() && *r.exit_code == 0 && !r.timed_out;
  ToolOutput out;
  out.data = {{"command", cmd.argv},
              {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
              {"term_signal", r.term_signal ? json(*r.term_signal) : json(nullptr)},
              {"timed_out", r.timed_out},
              {"passed", passed},
              {"stdout", std::string(out_head)},
              {"stderr", std::string(err_head)},
              {"truncated", truncated},
              {"stdout_bytes", r.out.total_bytes},
              {"stderr_bytes", r.err.total_bytes},
              {"log", log_path},
              {"log_complete", !r.out.truncated && !r.err.truncated},
              {"layers_in_force", r.layers_in_force},
              // Asked for but not applied here, each with the machine's reason ("landlock: ...").
              {"layers_unavailable", r.layers_unavailable}};
  out.refs.push_back({log_path, log_sha});
  out.cost = {{"wall_ms", absl::ToDoubleMilliseconds(r.wall_time)},
              {"cpu_ms", absl::ToDoubleMilliseconds(r.user_cpu + r.system_cpu)}};
  return out;
}

// ---- task.finish ---------------------------------------------------------------------------

absl::Status TestsPassedAfterLastWrite(const ToolContext& ctx, const json&) {
  if (ctx.state.TestsPassedSinceLastWrite()) return absl::OkStatus();
  return MakeError(ErrorCode::kEPRECONDITION,
                   absl::StrCat("task.finish refused: no passing test.run since the last write "
                                "(world version ",
                                ctx.state.world.version, "); run test.run and make it pass first"));
}

absl::StatusOr<ToolOutput> TaskFinish(ToolContext& ctx, const json& args) {
  ctx.state.task.done = true;
  ctx.state.task.answer = args.at("answer").get<std::string>();
  ToolOutput out;
  out.data = {{"answer", *ctx.state.task.answer}, {"world_version", ctx.state.world.version}};
  return out;
}

}  // namespace

std::set<std::string> BuiltinScopes() {
  return {"workspace:read", "workspace:write", "exec:test", "task:finish"};
}

sandbox::WorkspaceOptions AgentWorkspaceOptions() {
  sandbox::WorkspaceOptions options;
  options.list_excludes.push_back(kAgentDir);
  return options;
}

absl::Status RegisterBuiltinTools(Registry& registry, const BuiltinToolOptions& options) {
  ProcessRunner run = options.run;
  if (!run) run = [](const sandbox::RunRequest& r) { return sandbox::Run(r); };
  const json path_only = {{"type", "object"},
                          {"properties", {{"path", StringSchema()}}},
                          {"required", {"path"}},
                          {"additionalProperties", false}};
  std::vector<ToolSpec> specs;
  specs.push_back({"fs.read",
                   "Read a whole workspace file (up to 256 KiB) with its sha256.",
                   path_only, Effect::kRead, Idempotency::kIdempotent, "workspace:read", FsRead,
                   nullptr, {{"units", 1}}});
  specs.push_back(
      {"fs.read_range",
       "Read part of a workspace file: bytes (offset, length) or lines (start_line, end_line; "
       "1-based, inclusive).",
       {{"type", "object"},
        {"properties",
         {{"path", StringSchema()},
          {"offset", {{"type", "integer"}, {"minimum", 0}}},
          {"length", {{"type", "integer"}, {"minimum", 1}, {"maximum", kReadCap}}},
          {"start_line", {{"type", "integer"}, {"minimum", 1}}},
          {"end_line", {{"type", "integer"}, {"minimum", 1}}}}},
        {"required", {"path"}},
        {"additionalProperties", false}},
       Effect::kRead, Idempotency::kIdempotent, "workspace:read", FsReadRange, nullptr,
       {{"units", 1}}});
  specs.push_back({"fs.list",
                   "List workspace files with sizes (without .git, build caches and .agent).",
                   {{"type", "object"},
                    {"properties", {{"prefix", StringSchema()}}},
                    {"additionalProperties", false}},
                   Effect::kRead, Idempotency::kIdempotent, "workspace:read", FsList, nullptr,
                   {{"units", 1}}});
  specs.push_back(
      {"patch.apply",
       "Replace the one occurrence of `old` with `new` in a file, atomically.",
       {{"type", "object"},
        {"properties",
         {{"path", StringSchema()},
          {"old", {{"type", "string"}, {"minLength", 1}, {"maxLength", kReadCap}}},
          {"new", {{"type", "string"}, {"maxLength", kReadCap}}}}},
        {"required", {"path", "old", "new"}},
        {"additionalProperties", false}},
       Effect::kWrite, Idempotency::kNotIdempotent, "workspace:write", PatchApply, nullptr,
       {{"units", 1}}});
  specs.push_back({"test.run",
                   "Run the workspace's test command in the sandbox; exit status, capped output "
                   "and a ref to the full log.",
                   {{"type", "object"}, {"additionalProperties", false}},
                   Effect::kExec, Idempotency::kIdempotent, "exec:test",
                   [run](ToolContext& ctx, const json& args) { return TestRun(run, ctx, args); },
                   TestCommandConfigured, {{"units", 5}}});
  specs.push_back({"task.finish",
                   "Submit the answer and end the task; refused unless tests passed after the last "
                   "write.",
                   {{"type", "object"},
                    {"properties", {{"answer", {{"type", "string"}, {"minLength", 1},
                                                {"maxLength", 4000}}}}},
                    {"required", {"answer"}},
                    {"additionalProperties", false}},
                   Effect::kControl, Idempotency::kNotIdempotent, "task:finish", TaskFinish,
                   TestsPassedAfterLastWrite, {{"units", 0}}});
  for (ToolSpec& spec : specs) SB_RETURN_IF_ERROR(registry.Register(std::move(spec)));
  return absl::OkStatus();
}

}  // namespace agent

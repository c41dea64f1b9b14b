#include "sandbox/cli/flags.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sandbox/errors.h"
#include "sandbox/status_macros.h"
#include "sandbox/unique_fd.h"

namespace sandbox::cli {
namespace {

constexpr FlagDoc kFlags[] = {
    {"--workspace", "DIR", "The workspace root (default: the current directory)."},
    {"--cwd", "REL", "Working directory of the command, relative to the workspace (no '..')."},
    {"--timeout", "SECONDS",
     "Wall-clock limit (default 30; fractions allowed). On expiry the whole process group gets "
     "SIGTERM, then SIGKILL after --grace; exit status 124."},
    {"--grace", "SECONDS", "Time between SIGTERM and SIGKILL on timeout (default 2; 0: SIGKILL at once)."},
    {"--cpu", "SECONDS",
     "RLIMIT_CPU soft limit in whole seconds (hard = soft + 1), or 'unlimited' (default 10)."},
    {"--memory", "BYTES", "RLIMIT_AS, with K/M/G suffixes, or 'unlimited' (default: not set)."},
    {"--fsize", "BYTES", "RLIMIT_FSIZE: largest file the command may write (default 64M)."},
    {"--nofile", "N", "RLIMIT_NOFILE: open file limit (default 256)."},
    {"--nproc", "N", "RLIMIT_NPROC (default: not set; not enforced for root)."},
    {"--output-cap", "BYTES",
     "Bytes kept of stdout and of stderr each (default 1M); the rest is drained and counted."},
    {"--env", "K=V", "Set an environment variable for the command (repeatable)."},
    {"--inherit-env", "",
     "Start from this process's environment instead of the minimal one (PATH, HOME, LANG)."},
    {"--stdin", "FILE", "Feed FILE to the command's stdin ('-': our stdin); default /dev/null."},
    {"--isolate", "LAYERS",
     "Kernel isolation layers to apply when this machine has them, comma-separated or 'all': "
     "userns,mountns,pidns,netns,ipcns,utsns,cgroup,reaper,caps,nnp,landlock,seccomp. A missing "
     "layer is skipped and named on stderr (see `sandbox doctor`). Default: none."},
    {"--no-isolate", "LAYERS", "Layers to leave out of --isolate (e.g. --isolate=all --no-isolate=netns)."},
    {"--require", "LAYERS",
     "Layers that must be applied: when one is unavailable the run fails closed (EUNSUPPORTED, "
     "exit 125). Implies --isolate for them."},
    {"--allow-network", "", "Keep the network: no net namespace, and Landlock and seccomp allow TCP."},
    {"--seccomp", "PROFILE", "seccomp profile: default (denylist) or strict (allowlist)."},
    {"--cgroup-memory", "BYTES", "cgroup memory limit (default 1G); the result says when it killed the command."},
    {"--cgroup-pids", "N", "cgroup pids.max (default 512): contains fork bombs."},
    {"--cgroup-cpu", "MILLICPUS", "cgroup CPU bandwidth, 1000 = one CPU (default: not set)."},
    {"--json", "", "Print the result as one JSON object on stdout instead of the command's output."},
    {"--help", "", "Print this help and exit."},
};

absl::Status FlagError(absl::string_view flag, absl::string_view problem) {
  return MakeError(ErrorCode::kEINVAL, absl::StrCat(flag, ": ", problem));
}

absl::StatusOr<std::optional<uint64_t>> ParseLimit(absl::string_view flag, absl::string_view text,
                                                   bool bytes) {
  if (text == "unlimited") return std::optional<uint64_t>();
  absl::StatusOr<uint64_t> value = ParseBytes(text);
  if (!value.ok() || (!bytes && !absl::ascii_isdigit(static_cast<unsigned char>(text.back())))) {
    return FlagError(flag, absl::StrCat("expected ", bytes ? "a byte count" : "a number",
                                        " or 'unlimited', got '", text, "'"));
  }
  return std::optional<uint64_t>(*value);
}

using Apply = std::function<absl::Status(absl::string_view flag, absl::string_view value,
                                         CliOptions& options)>;

// The handler of each flag, by name; kFlags holds the documentation.
const std::map<std::string, Apply, std::less<>>& Handlers() {
  static const auto* handlers = new std::map<std::string, Apply, std::less<>>{
      {"--workspace",
       [](auto, auto v, CliOptions& o) {
         o.workspace = std::string(v);
         return absl::OkStatus();
       }},
      {"--cwd",
       [](auto, auto v, CliOptions& o) {
         o.cwd = std::string(v);
         return absl::OkStatus();
       }},
      {"--timeout",
       [](auto f, auto v, CliOptions& o) {
         absl::StatusOr<absl::Duration> d = ParseSeconds(v);
         if (!d.ok()) return FlagError(f, d.status().message());
         o.timeout = *d;
         return absl::OkStatus();
       }},
      {"--grace",
       [](auto f, auto v, CliOptions& o) {
         if (v == "0") {
           o.grace = absl::ZeroDuration();
           return absl::OkStatus();
         }
         absl::StatusOr<absl::Duration> d = ParseSeconds(v);
         if (!d.ok()) return FlagError(f, d.status().message());
         o.grace = *d;
         return absl::OkStatus();
       }},
      {"--cpu",
       [](auto f, auto v, CliOptions& o) {
         SB_ASSIGN_OR_RETURN(o.limits.cpu_seconds, ParseLimit(f, v, false));
         if (o.limits.cpu_seconds == 0u) return FlagError(f, "must be at least 1");
         return absl::OkStatus();
       }},
      {"--memory",
       [](auto f, auto v, CliOptions& o) {
         SB_ASSIGN_OR_RETURN(o.limits.address_space_bytes, ParseLimit(f, v, true));
         return absl::OkStatus();
       }},
      {"--fsize",
       [](auto f, auto v, CliOptions& o) {
         SB_ASSIGN_OR_RETURN(o.limits.file_size_bytes, ParseLimit(f, v, true));
         return absl::OkStatus();
       }},
      {"--nofile",
       [](auto f, auto v, CliOptions& o) {
         SB_ASSIGN_OR_RETURN(o.limits.open_files, ParseLimit(f, v, false));
         return absl::OkStatus();
       }},
      {"--nproc",
       [](auto f, auto v, CliOptions& o) {
         SB_ASSIGN_OR_RETURN(o.limits.processes, ParseLimit(f, v, false));
         return absl::OkStatus();
       }},
      {"--output-cap",
       [](auto f, auto v, CliOptions& o) {
         absl::StatusOr<uint64_t> cap = ParseBytes(v);
         if (!cap.ok()) return FlagError(f, cap.status().message());
         o.output_cap = *cap;
         return absl::OkStatus();
       }},
      {"--env",
       [](auto f, auto v, CliOptions& o) {
         const size_t eq = v.find('=');
         if (eq == absl::string_view::npos || eq == 0) {
           return FlagError(f, absl::StrCat("expected NAME=VALUE, got '", v, "'"));
         }
         o.env.emplace_back(std::string(v.substr(0, eq)), std::string(v.substr(eq + 1)));
         return absl::OkStatus();
       }},
      {"--inherit-env",
       [](auto, auto, CliOptions& o) {
         o.inherit_env = true;
         return absl::OkStatus();
       }},
      {"--stdin",
       [](auto, auto v, CliOptions& o) {
         o.stdin_file = std::string(v);
         return absl::OkStatus();
       }},
      {"--isolate",
       [](auto, auto v, CliOptions& o) {
         o.isolation.isolate = std::string(v);
         return absl::OkStatus();
       }},
      {"--no-isolate",
       [](auto, auto v, CliOptions& o) {
         o.isolation.no_isolate = std::string(v);
         return absl::OkStatus();
       }},
      {"--require",
       [](auto, auto v, CliOptions& o) {
         o.isolation.require = std::string(v);
         return absl::OkStatus();
       }},
      {"--allow-network",
       [](auto, auto, CliOptions& o) {
         o.isolation.allow_network = true;
         return absl::OkStatus();
       }},
      {"--seccomp",
       [](auto, auto v, CliOptions& o) {
         o.isolation.seccomp = std::string(v);
         return absl::OkStatus();
       }},
      {"--cgroup-memory",
       [](auto f, auto v, CliOptions& o) {
         absl::StatusOr<uint64_t> bytes = ParseBytes(v);
         if (!bytes.ok()) return FlagError(f, bytes.status().message());
         o.isolation.memory_bytes = *bytes;
         return absl::OkStatus();
       }},
      {"--cgroup-pids",
       [](auto f, auto v, CliOptions& o) {
         uint64_t n;
         if (!absl::SimpleAtoi(v, &n) || n == 0) return FlagError(f, absl::StrCat("expected a positive number, got '", v, "'"));
         o.isolation.pids = n;
         return absl::OkStatus();
       }},
      {"--cgroup-cpu",
       [](auto f, auto v, CliOptions& o) {
         uint32_t n;
         if (!absl::SimpleAtoi(v, &n) || n == 0) return FlagError(f, absl::StrCat("expected a positive number, got '", v, "'"));
         o.isolation.cpu_millis = n;
         return absl::OkStatus();
       }},
      {"--json",
       [](auto, auto, CliOptions& o) {
         o.json = true;
         return absl::OkStatus();
       }},
      {"--help",
       [](auto, auto, CliOptions& o) {
         o.help = true;
         return absl::OkStatus();
       }},
  };
  return *handlers;
}

const FlagDoc* FindFlag(absl::string_view name) {
  for (const FlagDoc& doc : kFlags) {
    if (doc.name == name) return &doc;
  }
  return nullptr;
}

// The workspace's real path joined with a relative --cwd, which must stay beneath it.
absl::StatusOr<std::string> ResolveCwd(const std::string& workspace, const std::string& rel) {
  char real[PATH_MAX];
  if (realpath(workspace.c_str(), real) == nullptr) {
    return ErrnoError(errno, absl::StrCat("--workspace '", workspace, "'"));
  }
  const std::string root = real;
  if (rel.empty()) return root;
  if (rel[0] == '/') return FlagError("--cwd", "must be relative to the workspace");
  for (absl::string_view part : absl::StrSplit(rel, '/')) {
    if (part == "..") return FlagError("--cwd", "must not contain '..'");
  }
  const std::string joined = absl::StrCat(root, "/", rel);
  if (realpath(joined.c_str(), real) == nullptr) {
    return ErrnoError(errno, absl::StrCat("--cwd '", rel, "'"));
  }
  const std::string resolved = real;
  if (resolved != root && resolved.rfind(root == "/" ? "/" : root + "/", 0) != 0) {
    return MakeError(ErrorCode::kEPERM,
                     absl::StrCat("--cwd '", rel, "' resolves outside the workspace"));
  }
  return resolved;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, absl::StrCat("--stdin '", path, "'"));
  std::string data;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
    if (n == 0) return data;
    if (n == -1) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("read(", path, ")"));
    }
    data.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

std::span<const FlagDoc> AllFlags() { return kFlags; }

std::string UsageText() {
  std::string text =
      "Usage: sandbox [FLAGS] [--] CMD [ARGS...]\n"
      "       sandbox doctor [--json]   (each kernel isolation layer here: available or not, and why)\n"
      "\n"
      "Runs CMD (an argv, never a shell string) in its own session and process group, with rlimits,\n"
      "every inherited fd but 0, 1, 2 closed, an explicit environment, a wall-clock timeout that kills\n"
      "the whole group, and capped output. Without --json the command's stdout and stderr are written\n"
      "out after it ends (capped; a note on stderr says when they were truncated).\n"
      "\n"
      "Flags:\n";
  constexpr size_t kHelpColumn = 24, kWidth = 100;
  for (const FlagDoc& doc : kFlags) {
    std::string line = absl::StrCat("  ", doc.name, doc.value.empty() ? "" : "=", doc.value);
    line.resize(std::max(line.size() + 1, kHelpColumn), ' ');
    for (absl::string_view word : absl::StrSplit(doc.help, ' ')) {  // Wrap at kWidth columns.
      if (line.size() + 1 + word.size() > kWidth && line.size() > kHelpColumn) {
        absl::StrAppend(&text, line, "\n");
        line = std::string(kHelpColumn, ' ');
      }
      absl::StrAppend(&line, line.back() == ' ' ? "" : " ", word);
    }
    absl::StrAppend(&text, line, "\n");
  }
  absl::StrAppend(&text,
                  "\nExit status (like timeout(1)):\n"
                  "  the command's own status; 128+N if signal N ended it; 124 on timeout;\n"
                  "  125 for a sandbox error or a bad flag (one line on stderr);\n"
                  "  128+N if signal N (INT, TERM, HUP) interrupted sandbox itself: the command's\n"
                  "  whole process group is ended first.\n");
  return text;
}

absl::StatusOr<uint64_t> ParseBytes(absl::string_view text) {
  if (text.empty()) return MakeError(ErrorCode::kEINVAL, "expected a byte count, got ''");
  uint64_t multiplier = 1;
  absl::string_view digits = text;
  switch (absl::ascii_toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': multiplier = 1ull << 10; break;
    case 'M': multiplier = 1ull << 20; break;
    case 'G': multiplier = 1ull << 30; break;
    case 'T': multiplier = 1ull << 40; break;
    default: break;
  }
  if (multiplier != 1) digits.remove_suffix(1);
  uint64_t value = 0;
  const bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
  if (!all_digits || !absl::SimpleAtoi(digits, &value) ||
      value > std::numeric_limits<uint64_t>::max() / multiplier) {
    return MakeError(ErrorCode::kEINVAL,
                     absl::StrCat("expected a byte count like 4096, 64K, 64M or 2G, got '", text,
                                  "'"));
  }
  return value * multiplier;
}

absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view text) {
  double seconds = 0;
  if (text.empty() || !absl::SimpleAtod(text, &seconds) || !(seconds > 0) || seconds > 1e9) {
    return MakeError(ErrorCode::kEINVAL,
                     absl::StrCat("expected a positive number of seconds, got '", text, "'"));
  }
  return absl::Seconds(seconds);
}

absl::StatusOr<CliOptions> ParseCommandLine(const std::vector<std::string>& args) {
  CliOptions options;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // The command starts here.
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const FlagDoc* doc = FindFlag(name);
    if (doc == nullptr) {
      return MakeError(ErrorCode::kEINVAL, absl::StrCat("unknown flag '", name, "' (see --help)"));
    }
    std::string value;
    if (doc->value.empty()) {
      if (eq != std::string::npos) return FlagError(name, "takes no value");
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return FlagError(name, absl::StrCat("needs a value (", name, "=", doc->value, ")"));
    }
    SB_RETURN_IF_ERROR(Handlers().find(name)->second(name, value, options));
  }
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (options.command.empty() && !options.help) {
    return MakeError(ErrorCode::kEINVAL, "no command given (usage: sandbox [FLAGS] -- CMD ARGS...)");
  }
  return options;
}

absl::StatusOr<RunRequest> BuildRequest(const CliOptions& options, const std::string& current_dir,
                                        const std::map<std::string, std::string>& parent_env,
                                        const std::function<absl::StatusOr<std::string>()>& read_stdin) {
  RunRequest request;
  request.argv = options.command;
  SB_ASSIGN_OR_RETURN(request.cwd,
                      ResolveCwd(options.workspace.empty() ? current_dir : options.workspace,
                                 options.cwd));
  std::map<std::string, std::string> env =
      options.inherit_env ? parent_env : DefaultEnvironment(request.cwd);
  for (const auto& [key, value] : options.env) env[key] = value;
  request.env = std::move(env);
  if (options.stdin_file.has_value()) {
    if (*options.stdin_file == "-") {
      SB_ASSIGN_OR_RETURN(request.stdin_data, read_stdin());
    } else {
      SB_ASSIGN_OR_RETURN(request.stdin_data, ReadWholeFile(*options.stdin_file));
    }
  }
  request.wall_timeout = options.timeout;
  request.kill_grace = options.grace;
  request.stdout_cap = options.output_cap;
  request.stderr_cap = options.output_cap;
  request.limits = options.limits;
  return request;
}

int ExitStatusFor(const RunResult& result) {
  if (result.timed_out) return kExitTimeout;
  if (result.term_signal.has_value()) return 128 + *result.term_signal;
  return result.exit_code.value_or(kExitSandboxError);
}

}  // namespace sandbox::cli

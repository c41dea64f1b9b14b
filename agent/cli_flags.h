// A small command-line flag parser for the agent's commands.
//
// Why not absl flags: its --help and unknown-flag paths exit with status 1 and print several lines,
// while these commands promise `--help` with status 0 and a one-line error with status 2 for bad
// input. Flags are `--name=value` or `--name value`; `-` and `_` in names are the same; booleans take
// `--name`, `--name=true|false`; `--` ends the flags.
//
// Thread-safety: one parser per command invocation.
#ifndef AGENT_CLI_FLAGS_H_
#define AGENT_CLI_FLAGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace agent {

class FlagParser {
 public:
  // `usage`: the synopsis line, e.g. "run_demo [--mode=good|loop|escape] ..."; `about`: what the
  // command does, a paragraph.
  FlagParser(std::string usage, std::string about);

  void AddString(const std::string& name, std::string default_value, std::string help);
  void AddInt(const std::string& name, int64_t default_value, std::string help);
  void AddBool(const std::string& name, std::string help);

  // Parses argv[1..]; returns the positional arguments. InvalidArgument with a one-line message for
  // an unknown flag, a missing value or a malformed number.
  absl::StatusOr<std::vector<std::string>> Parse(int argc, char** argv);

  bool help() const { return help_; }
  const std::string& GetString(const std::string& name) const;
  int64_t GetInt(const std::string& name) const;
  bool GetBool(const std::string& name) const;
  // Whether the flag was given on the command line.
  bool IsSet(const std::string& name) const;

  // The --help text.
  std::string Usage() const;

 private:
  enum class Kind { kString, kInt, kBool };
  struct Flag {
    Kind kind;
    std::string value;
    std::string help;
    bool set = false;
  };

  static std::string Normalize(std::string name);

  std::string usage_;
  std::string about_;
  std::vector<std::string> order_;
  std::map<std::string, Flag> flags_;
  bool help_ = false;
};

// Resolves `path` against BUILD_WORKING_DIRECTORY when it is relative and that variable is set
// (`bazel run` starts binaries in their runfiles directory), else against the current directory.
std::string ResolveUserPath(const std::string& path);

// Splits a command line into argv words as a POSIX shell would, without running one: whitespace
// separates words; '...' keeps everything literally; "..." keeps everything but \" \\ \$ \` and
// a backslash-newline; a backslash outside quotes keeps the next character. Nothing is expanded
// ($, *, ~ stay as written). An unterminated quote, a trailing backslash or no word at all is an
// error naming the problem.
absl::StatusOr<std::vector<std::string>> SplitCommandWords(absl::string_view line);

}  // namespace agent

#endif  // AGENT_CLI_FLAGS_H_

#include "agent/cli_flags.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace agent {

FlagParser::FlagParser(std::string usage, std::string about)
    : usage_(std::move(usage)), about_(std::move(about)) {}

std::string FlagParser::Normalize(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return name;
}

void FlagParser::AddString(const std::string& name, std::string default_value, std::string help) {
  order_.push_back(Normalize(name));
  flags_[Normalize(name)] = Flag{Kind::kString, std::move(default_value), std::move(help)};
}

void FlagParser::AddInt(const std::string& name, int64_t default_value, std::string help) {
  order_.push_back(Normalize(name));
  flags_[Normalize(name)] = Flag{Kind::kInt, std::to_string(default_value), std::move(help)};
}

void FlagParser::AddBool(const std::string& name, std::string help) {
  order_.push_back(Normalize(name));
  flags_[Normalize(name)] = Flag{Kind::kBool, "false", std::move(help)};
}

absl::StatusOr<std::vector<std::string>> FlagParser::Parse(int argc, char** argv) {
  std::vector<std::string> positional;
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (flags_done || arg.size() < 2 || arg.rfind("--", 0) != 0) {
      if (!flags_done && arg.size() >= 2 && arg[0] == '-' && arg != "-") {
        if (arg == "-h") {
          help_ = true;
          continue;
        }
        return absl::InvalidArgumentError(absl::StrCat("unknown flag '", arg, "' (try --help)"));
      }
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    std::string body = arg.substr(2);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    name = Normalize(name);
    if (name == "help") {
      help_ = true;
      continue;
    }
    auto it = flags_.find(name);
    if (it == flags_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '--", name, "' (try --help)"));
    }
    Flag& flag = it->second;
    if (flag.kind == Kind::kBool) {
      if (!has_value) value = "true";
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " takes true or false, not '", value, "'"));
      }
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = argv[++i];
    }
    if (flag.kind == Kind::kInt) {
      int64_t n;
      if (!absl::SimpleAtoi(value, &n)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " takes an integer, not '", value, "'"));
      }
    }
    flag.value = value;
    flag.set = true;
  }
  return positional;
}

const std::string& FlagParser::GetString(const std::string& name) const {
  return flags_.at(Normalize(name)).value;
}

int64_t FlagParser::GetInt(const std::string& name) const {
  int64_t n = 0;
  if (!absl::SimpleAtoi(flags_.at(Normalize(name)).value, &n)) return 0;
  return n;
}

bool FlagParser::GetBool(const std::string& name) const {
  return flags_.at(Normalize(name)).value == "true";
}

bool FlagParser::IsSet(const std::string& name) const { return flags_.at(Normalize(name)).set; }

std::string FlagParser::Usage() const {
  std::string out = absl::StrCat("usage: ", usage_, "\n\n", about_, "\n\nflags:\n");
  for (const std::string& name : order_) {
    const Flag& f = flags_.at(name);
    std::string synopsis = absl::StrCat("  --", name, f.kind == Kind::kBool ? "" : "=VALUE");
    std::string def = f.kind == Kind::kBool || f.value.empty()
                          ? ""
                          : absl::StrCat(" (default: ", f.value, ")");
    absl::StrAppend(&out, synopsis, "\n      ", f.help, def, "\n");
  }
  absl::StrAppend(&out, "  --help\n      print this text and exit 0\n");
  return out;
}

std::string ResolveUserPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* base = std::getenv("BUILD_WORKING_DIRECTORY");
  if (base != nullptr && base[0] != '\0') return absl::StrCat(base, "/", path);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) return absl::StrCat(cwd, "/", path);
  return path;
}

absl::StatusOr<std::vector<std::string>> SplitCommandWords(absl::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == line.size()) {
        return absl::InvalidArgumentError("the command ends in a lone backslash");
      }
      if (line[++i] != '\n') word += line[i];  // backslash-newline joins lines
      continue;
    }
    if (c != '\'' && c != '"') {
      word += c;
      continue;
    }
    size_t open = i;
    while (++i < line.size() && line[i] != c) {
      if (c == '"' && line[i] == '\\' && i + 1 < line.size() &&
          absl::string_view("\"\\$`\n").find(line[i + 1]) != absl::string_view::npos) {
        if (line[++i] != '\n') word += line[i];
        continue;
      }
      word += line[i];
    }
    if (i == line.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the ", c == '"' ? "double" : "single",
                                                     " quote at byte ", open,
                                                     " is never closed"));
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return absl::InvalidArgumentError("the command is empty");
  return words;
}

}  // namespace agent

#include "mutation/generate.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

namespace mutation {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// Whether the quote at text[i] is a C++14 digit separator (1'000, 0xFF'FF) rather than the start
// of a character literal: it sits between digits of a number token.
bool IsDigitSeparator(const std::string& text, std::size_t i) {
  if (i == 0 || i + 1 >= text.size()) return false;
  if (!IsHexDigit(text[i - 1]) || !IsHexDigit(text[i + 1])) return false;
  std::size_t j = i;
  while (j > 0 && (IsIdentChar(text[j - 1]) || text[j - 1] == '\'')) --j;
  return std::isdigit(static_cast<unsigned char>(text[j])) != 0;
}

// The raw-string delimiter if text[i] == '"' opens one (R"delim( with an optional u8/u/U/L
// prefix before the R), else nullopt.
bool RawStringAt(const std::string& text, std::size_t i, std::string* delimiter) {
  if (i == 0 || text[i - 1] != 'R') return false;
  std::size_t start = i - 1;
  while (start > 0 && IsIdentChar(text[start - 1])) --start;
  std::string prefix = text.substr(start, i - 1 - start);
  if (!(prefix.empty() || prefix == "u8" || prefix == "u" || prefix == "U" || prefix == "L")) {
    return false;
  }
  std::size_t open = text.find('(', i + 1);
  if (open == std::string::npos || open - i - 1 > 16) return false;
  *delimiter = text.substr(i + 1, open - i - 1);
  return true;
}

}  // namespace

std::vector<bool> CodeMask(const std::string& text) {
  std::vector<bool> code(text.size(), true);
  std::size_t i = 0;
  bool line_start = true;  // only whitespace seen since the last newline
  const std::size_t n = text.size();
  auto mark = [&code](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < code.size(); ++k) code[k] = false;
  };
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && c == '#') {
      // A preprocessor line, with its backslash continuations.
      std::size_t end = i;
      while (end < n && !(text[end] == '\n' && text[end - 1] != '\\')) ++end;
      mark(i, end);
      i = end;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      std::size_t end = text.find('\n', i);
      if (end == std::string::npos) end = n;
      mark(i, end);
      i = end;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      std::size_t end = text.find("*/", i + 2);
      end = end == std::string::npos ? n : end + 2;
      mark(i, end);
      i = end;
      continue;
    }
    if (c == '"') {
      std::string delimiter;
      std::size_t end;
      if (RawStringAt(text, i, &delimiter)) {
        std::string close = absl::StrCat(")", delimiter, "\"");
        end = text.find(close, i + 1);
        end = end == std::string::npos ? n : end + close.size();
        // The R and its prefix are part of the literal too.
        std::size_t start = i - 1;
        while (start > 0 && IsIdentChar(text[start - 1])) --start;
        mark(start, end);
      } else {
        end = i + 1;
        while (end < n && text[end] != '"' && text[end] != '\n') {
          end += text[end] == '\\' ? 2 : 1;
        }
        end = std::min(n, end + 1);
        mark(i, end);
      }
      i = end;
      continue;
    }
    if (c == '\'' && !IsDigitSeparator(text, i)) {
      std::size_t end = i + 1;
      while (end < n && text[end] != '\'' && text[end] != '\n') end += text[end] == '\\' ? 2 : 1;
      end = std::min(n, end + 1);
      mark(i, end);
      i = end;
      continue;
    }
    ++i;
  }
  return code;
}

bool IsGeneratedSource(const std::string& path) {
  if (!absl::EndsWith(path, ".cc")) return false;
  std::size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  // Tests and their support code (helpers, utilities, fixtures) are the judges, not the judged.
  if (absl::StrContains(base, "_test") || absl::StartsWith(base, "test") ||
      absl::StrContains(base, "testing")) {
    return false;
  }
  if (absl::StrContains(base, "_bench") || absl::StrContains(base, "_fuzz")) return false;
  if (absl::StartsWith(path, "testdata/") || absl::StrContains(path, "/testdata/")) return false;
  return true;
}

namespace {

struct Line {
  int number;           // 1-based
  std::size_t offset;   // of its first byte in the file
  std::string raw;      // the text as written
  std::string code;     // same length; every non-code byte replaced by a space
};

std::vector<Line> SplitLines(const std::string& text, const std::vector<bool>& mask) {
  std::vector<Line> lines;
  std::size_t start = 0;
  int number = 1;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    Line line{number++, start, text.substr(start, end - start), ""};
    line.code = line.raw;
    for (std::size_t k = 0; k < line.code.size(); ++k) {
      if (!mask[start + k]) line.code[k] = ' ';
    }
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

// Collects the mutants of one line; `index` counts sites per operator on the line.
class LineMutator {
 public:
  LineMutator(const std::string& path, const Line& line, std::vector<Mutant>* out)
      : path_(path), line_(line), out_(out) {}

  void Add(const char* op, std::size_t col, std::string original, std::string replacement) {
    Mutant m;
    int index = counts_[op]++;
    m.id = absl::StrCat(path_, ":", line_.number, ":", op, ":", index);
    m.file = path_;
    m.mutator = op;
    m.offset = line_.offset + col;
    m.original = std::move(original);
    m.replacement = std::move(replacement);
    out_->push_back(std::move(m));
  }

 private:
  const std::string& path_;
  const Line& line_;
  std::vector<Mutant>* out_;
  std::map<std::string, int> counts_;
};

bool SpacedAt(const std::string& code, std::size_t i, std::size_t len) {
  return i > 0 && code[i - 1] == ' ' && i + len < code.size() && code[i + len] == ' ';
}

void Relational(const std::string& code, LineMutator* lm) {
  static const std::pair<const char*, const char*> kOps[] = {
      {"<=", "<"}, {">=", ">"}, {"==", "!="}, {"!=", "=="}, {"<", "<="}, {">", ">="},
  };
  for (std::size_t i = 0; i < code.size(); ++i) {
    for (const auto& [op, repl] : kOps) {
      std::size_t len = std::char_traits<char>::length(op);
      // Binary operators are spaced in this code base; template brackets, `->`, `<<` and
      // `operator==` are not, which is how they are told apart without a parser.
      if (code.compare(i, len, op) == 0 && SpacedAt(code, i, len)) {
        lm->Add(kRelational, i, op, repl);
        i += len - 1;
        break;
      }
    }
  }
}

bool IsLogicalAt(const std::string& code, std::size_t i) {
  return (code.compare(i, 2, "&&") == 0 || code.compare(i, 2, "||") == 0) && SpacedAt(code, i, 2);
}

// Whether the operator at i shares its parenthesis level with another && or ||, or the expression
// continues on another line. Swapping one of `a && b && c` gives `a && b || c`, which
// -Wparentheses (an error under -Werror) rejects: an unviable mutant that only costs a build.
bool SharesLevelWithLogical(const std::string& code, std::size_t i) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(code);
  if (absl::StartsWith(trimmed, "&&") || absl::StartsWith(trimmed, "||") ||
      absl::EndsWith(trimmed, "&&") || absl::EndsWith(trimmed, "||")) {
    return true;
  }
  int depth = 0;
  for (std::size_t k = i; k-- > 0;) {
    if (code[k] == ')') ++depth;
    if (code[k] == '(' && depth-- == 0) break;
    if (depth == 0 && k + 1 < code.size() && IsLogicalAt(code, k)) return true;
  }
  depth = 0;
  for (std::size_t k = i + 2; k < code.size(); ++k) {
    if (code[k] == '(') ++depth;
    if (code[k] == ')' && depth-- == 0) break;
    if (depth == 0 && IsLogicalAt(code, k)) return true;
  }
  return false;
}

void Logical(const std::string& code, LineMutator* lm) {
  for (std::size_t i = 0; i + 1 < code.size(); ++i) {
    bool is_and = code.compare(i, 2, "&&") == 0;
    bool is_or = code.compare(i, 2, "||") == 0;
    if ((is_and || is_or) && SpacedAt(code, i, 2) && !SharesLevelWithLogical(code, i)) {
      lm->Add(kLogical, i, is_and ? "&&" : "||", is_and ? "||" : "&&");
      ++i;
    }
  }
}

void NegateCondition(const std::string& raw, const std::string& code, LineMutator* lm) {
  for (auto [begin, end] : OneLineConditions(code)) {
    std::string cond = raw.substr(begin, end - begin);
    lm->Add(kNegateCondition, begin - 1, absl::StrCat("(", cond, ")"),
            absl::StrCat("(!(", cond, "))"));
  }
}

void ReturnValue(const std::string& code, LineMutator* lm) {
  static const std::pair<const char*, const char*> kValues[] = {
      {"true", "false"},
      {"false", "true"},
      {"0", "1"},
      {"1", "0"},
      {"absl::OkStatus()", "absl::InternalError(\"mutant\")"},
  };
  for (std::size_t i = code.find("return "); i != std::string::npos;
       i = code.find("return ", i + 1)) {
    if (i > 0 && IsIdentChar(code[i - 1])) continue;
    std::size_t v = i + 7;
    for (const auto& [value, repl] : kValues) {
      std::size_t len = std::char_traits<char>::length(value);
      if (code.compare(v, len, value) == 0 && v + len < code.size() && code[v + len] == ';') {
        lm->Add(kReturnValue, v, value, repl);
        break;
      }
    }
  }
}

bool BalancedParens(const std::string& s) {
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) return false;
  }
  return depth == 0;
}

// A line that is one whole call statement `a.b->c(args);`, following a line that ended a
// statement or opened/closed a block (so it is not the tail of a longer expression).
void DeleteCall(const std::string& code, const std::string& previous_code, LineMutator* lm) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(code);
  if (trimmed.size() < 4 || !absl::EndsWith(trimmed, ");")) return;
  std::size_t start = code.find_first_not_of(' ');
  std::size_t k = 0;
  // Identifier chain: name ((:: | . | ->) name)*
  while (true) {
    if (k >= trimmed.size() || !(std::isalpha(static_cast<unsigned char>(trimmed[k])) ||
                                 trimmed[k] == '_')) {
      return;
    }
    while (k < trimmed.size() && IsIdentChar(trimmed[k])) ++k;
    if (trimmed.compare(k, 2, "::") == 0 || trimmed.compare(k, 2, "->") == 0) {
      k += 2;
    } else if (k < trimmed.size() && trimmed[k] == '.') {
      k += 1;
    } else {
      break;
    }
  }
  if (k >= trimmed.size() || trimmed[k] != '(') return;
  absl::string_view name = trimmed.substr(0, k);
  static const char* kNotCalls[] = {"return", "delete", "throw", "co_return", "co_await",
                                    "if",     "while",  "for",   "switch",    "sizeof",
                                    "static_assert", "using", "goto", "case"};
  for (const char* word : kNotCalls) {
    if (name == word) return;
  }
  // Declarations through macros (SB_ASSIGN_OR_RETURN(auto x, ...)) cannot be deleted.
  if (absl::StrContains(name, "ASSIGN_OR_RETURN")) return;
  if (!BalancedParens(std::string(trimmed))) return;
  absl::string_view prev = absl::StripTrailingAsciiWhitespace(previous_code);
  if (!prev.empty()) {
    char last = prev.back();
    if (last != ';' && last != '{' && last != '}' && last != ':') return;
  }
  lm->Add(kDeleteCall, start, std::string(trimmed), "");
}

// Whether position i sits inside a template argument list (`std::array<uint8_t, 16>`): the nearest
// unmatched bracket to its left is an unspaced `<`. Sizes there are mostly types' shapes, and
// changing them is an equivalent or non-compiling mutant that only costs a build.
bool InTemplateArguments(const std::string& code, std::size_t i) {
  int depth = 0;
  for (std::size_t k = i; k-- > 0;) {
    char c = code[k];
    if (c == ')' || c == ']' || c == '}' || (c == '>' && k > 0 && code[k - 1] != ' ' &&
                                             code[k - 1] != '-')) {
      ++depth;
    } else if (c == '(' || c == '[' || c == '{') {
      if (depth-- == 0) return false;
    } else if (c == '<' && k > 0 && code[k - 1] != ' ' && code[k - 1] != '<' &&
               (k + 1 >= code.size() || code[k + 1] != '<')) {
      if (depth-- == 0) return true;
    }
  }
  return false;
}

void Constants(const std::string& code, LineMutator* lm) {
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(code[i]))) continue;
    if (i > 0 && (IsIdentChar(code[i - 1]) || code[i - 1] == '.')) {
      while (i < code.size() && (IsIdentChar(code[i]) || code[i] == '\'')) ++i;
      continue;
    }
    std::size_t end = i;
    while (end < code.size() && (std::isdigit(static_cast<unsigned char>(code[end])) ||
                                 code[end] == '\'')) {
      ++end;
    }
    std::size_t digits_end = end;
    while (end < code.size() && std::strchr("uUlLzZ", code[end]) != nullptr) ++end;
    bool is_float_or_other_base =
        end < code.size() && (code[end] == '.' || IsIdentChar(code[end]));
    std::string digits;
    for (std::size_t k = i; k < digits_end; ++k) {
      if (code[k] != '\'') digits += code[k];
    }
    bool octal = digits.size() > 1 && digits[0] == '0';
    bool after_return = i >= 7 && code.compare(i - 7, 7, "return ") == 0 &&
                        (digits == "0" || digits == "1") && end < code.size() && code[end] == ';';
    // `-1` is the C error sentinel (`== -1` after a syscall): -0 or -2 there only tests whether
    // the syscall can be made to fail, which unit tests rarely can; those mutants are noise.
    bool error_sentinel = false;
    if (digits == "1" && i > 0 && code[i - 1] == '-') {
      std::size_t before = code.find_last_not_of(' ', i - 1 == 0 ? 0 : i - 2);
      bool binary = i >= 2 && before != std::string::npos &&
                    (IsIdentChar(code[before]) || code[before] == ')' || code[before] == ']');
      error_sentinel = !binary;
    }
    if (!is_float_or_other_base && !octal && !after_return && !error_sentinel &&
        digits.size() <= 18 &&
        !InTemplateArguments(code, i)) {
      unsigned long long value = std::stoull(digits);
      std::string suffix = code.substr(digits_end, end - digits_end);
      std::string original = code.substr(i, end - i);
      lm->Add(kConstantPlus, i, original, absl::StrCat(value + 1, suffix));
      if (value > 0) lm->Add(kConstantMinus, i, original, absl::StrCat(value - 1, suffix));
    }
    i = end;
  }
}

// The reason in `// mutation: skip(reason)`; nullopt-like empty string with *present=false when
// there is no marker.
// The reason of `marker(reason)` in a comment on `line`: "" with *present=false when the line has no
// such marker, InvalidArgument when it has one without a reason. `example` is what the error shows.
absl::Status MarkerReason(const Line& line, const std::string& path, const char* marker,
                          const char* example, bool* present, std::string* reason) {
  *present = false;
  reason->clear();
  const std::size_t marker_len = std::char_traits<char>::length(marker);
  std::size_t at = line.raw.find(marker);
  // In a comment, and not the start of a longer marker (skip vs skip-file).
  while (at != std::string::npos &&
         (line.code.substr(at, 1) != " " ||
          (at + marker_len < line.raw.size() && line.raw[at + marker_len] == '-'))) {
    at = line.raw.find(marker, at + 1);
  }
  if (at == std::string::npos) return absl::OkStatus();
  std::size_t open = at + marker_len;
  std::size_t close = line.raw.find(')', open);
  if (open < line.raw.size() && line.raw[open] == '(' && close != std::string::npos) {
    *reason = std::string(absl::StripAsciiWhitespace(line.raw.substr(open + 1, close - open - 1)));
  }
  if (reason->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", line.number, ": `", marker,
                                                   "` needs a reason: write `// ", example, "`"));
  }
  *present = true;
  return absl::OkStatus();
}

absl::Status SkipMarker(const Line& line, const std::string& path, bool* skip) {
  std::string reason;
  return MarkerReason(line, path, kSkipMarker, "mutation: skip(why this line has no useful mutant)",
                      skip, &reason);
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> OneLineConditions(const std::string& code) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const char* kw : {"if (", "while ("}) {
    std::size_t kw_len = std::char_traits<char>::length(kw);
    for (std::size_t i = code.find(kw); i != std::string::npos; i = code.find(kw, i + 1)) {
      if (i > 0 && IsIdentChar(code[i - 1])) continue;
      std::size_t open = i + kw_len - 1;
      int depth = 0;
      std::size_t close = std::string::npos;
      bool init_statement = false;
      for (std::size_t k = open; k < code.size(); ++k) {
        if (code[k] == '(') ++depth;
        if (code[k] == ')' && --depth == 0) {
          close = k;
          break;
        }
        if (code[k] == ';' && depth == 1) init_statement = true;
      }
      if (close == std::string::npos || init_statement || close == open + 1) continue;
      out.push_back({open + 1, close});
    }
  }
  return out;
}

absl::StatusOr<std::string> SkipFileReason(const std::string& path, const std::string& text) {
  for (const Line& line : SplitLines(text, CodeMask(text))) {
    // A comment line of its own: a marker in a string literal, or after code, is not one.
    if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(line.raw), "//")) continue;
    bool present = false;
    std::string reason;
    absl::Status marker = MarkerReason(line, path, kSkipFileMarker,
                                       "mutation: skip-file(why no line here needs a mutant)",
                                       &present, &reason);
    if (!marker.ok()) return marker;
    if (present) return reason;
  }
  return std::string();
}

absl::StatusOr<std::vector<Mutant>> GenerateMutants(const std::string& path,
                                                    const std::string& text,
                                                    std::string* skip_file_reason) {
  absl::StatusOr<std::string> skip_file = SkipFileReason(path, text);
  if (!skip_file.ok()) return skip_file.status();
  if (skip_file_reason != nullptr) *skip_file_reason = *skip_file;
  if (!skip_file->empty()) return std::vector<Mutant>();
  std::vector<bool> mask = CodeMask(text);
  std::vector<Line> lines = SplitLines(text, mask);
  std::vector<Mutant> out;
  std::string previous_code;
  for (const Line& line : lines) {
    bool skip = false;
    absl::Status marker = SkipMarker(line, path, &skip);
    if (!marker.ok()) return marker;
    bool blank = line.code.find_first_not_of(' ') == std::string::npos;
    if (!skip && !blank) {
      std::vector<Mutant> here;
      LineMutator lm(path, line, &here);
      Relational(line.code, &lm);
      Logical(line.code, &lm);
      NegateCondition(line.raw, line.code, &lm);
      ReturnValue(line.code, &lm);
      DeleteCall(line.code, previous_code, &lm);
      Constants(line.code, &lm);
      std::stable_sort(here.begin(), here.end(),
                       [](const Mutant& a, const Mutant& b) { return a.offset < b.offset; });
      for (Mutant& m : here) {
        LocateMutant(text, &m);
        out.push_back(std::move(m));
      }
    }
    if (!blank) previous_code = line.code;
  }
  return out;
}

}  // namespace mutation

#include "mutation/schema.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mutation/generate.h"

namespace mutation {
namespace {

// The runtime every schema file carries. Header-only on purpose: the file's BUILD target needs no
// new dependency, and `inline` variables are one object per program however many files carry it.
// It initializes at load time (before main, so before any fork); On() is async-signal-safe after
// that (a load, a compare, a byte store), which matters in code that runs between fork and exec.
constexpr char kPrelude[] = R"(// Mutation schema prelude: written by //mutation:check into its scratch copy, never the checkout.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
namespace mutation_schema {
inline int g_active = 0;
inline unsigned char* g_hits = nullptr;
inline long g_size = 0;
inline bool g_ready = false;
inline void Init() noexcept {
  const char* active = getenv("MUTATION_ACTIVE");
  g_active = active != nullptr ? atoi(active) : 0;
  const char* coverage = getenv("MUTATION_COVERAGE");
  if (coverage != nullptr && *coverage != '\0') {
    int fd = open(coverage, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) {
        g_hits = static_cast<unsigned char*>(p);
        g_size = static_cast<long>(st.st_size);
      }
    }
    if (fd >= 0) close(fd);
  }
  g_ready = true;
}
inline const bool g_initialized = (Init(), true);
inline bool On(int id) noexcept {
  if (!g_ready) Init();
  if (g_hits != nullptr && id < g_size) g_hits[id] = 1;
  return id == g_active;
}
}  // namespace mutation_schema
)";

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

enum class SiteKind { kCondition, kExpression, kStatement };

struct Site {
  std::size_t begin = 0, end = 0;  // byte range within the line
  SiteKind kind = SiteKind::kExpression;
  std::vector<std::size_t> mutants;
};

// One line, its code view (non-code bytes are spaces) and its offset in the file.
struct LineView {
  std::size_t offset = 0;
  std::string raw;
  std::string code;
};

// The interior of each one-line `if (...)` / `while (...)` condition without an init-statement.
std::vector<std::pair<std::size_t, std::size_t>> Conditions(const std::string& code) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const char* kw : {"if (", "while ("}) {
    std::size_t kw_len = std::strlen(kw);
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

// The expression of a one-line `return E;`.
std::vector<std::pair<std::size_t, std::size_t>> Returns(const std::string& code) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = code.find("return "); i != std::string::npos;
       i = code.find("return ", i + 1)) {
    if (i > 0 && IsIdentChar(code[i - 1])) continue;
    std::size_t begin = i + 7;
    int depth = 0;
    for (std::size_t k = begin; k < code.size(); ++k) {
      char c = code[k];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth-- == 0) break;
      }
      if (c == ';' && depth == 0) {
        // A braced list (`return {a, b};`) has no type a conditional expression could take.
        if (k > begin && code[begin] != '{') out.push_back({begin, k});
        break;
      }
    }
  }
  return out;
}

bool IsSpacedOp(const std::string& code, std::size_t i, std::size_t len) {
  return i > 0 && code[i - 1] == ' ' && i + len < code.size() && code[i + len] == ' ';
}

// Whether a binary operator of the comparison or logical families starts at i (spaced, as the
// generator only mutates spaced operators); its length in *len.
bool ComparisonAt(const std::string& code, std::size_t i, std::size_t* len) {
  for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
    std::size_t l = std::strlen(op);
    if (code.compare(i, l, op) == 0 && IsSpacedOp(code, i, l)) {
      *len = l;
      return true;
    }
  }
  return false;
}

bool LogicalAt(const std::string& code, std::size_t i) {
  return (code.compare(i, 2, "&&") == 0 || code.compare(i, 2, "||") == 0) &&
         IsSpacedOp(code, i, 2);
}

// A character that ends an operand of a comparison or logical operator when met at depth 0:
// everything of lower precedence (assignment, ?:, comma, bitwise and/or/xor, logical) and the
// statement end. `::` is scope, not a conditional's colon.
bool EndsOperand(const std::string& code, std::size_t k) {
  char c = code[k];
  if (c == ';' || c == ',' || c == '?') return true;
  if (c == ':') {
    bool scope = (k > 0 && code[k - 1] == ':') || (k + 1 < code.size() && code[k + 1] == ':');
    return !scope;
  }
  if (c == '=') {
    char before = k > 0 ? code[k - 1] : ' ';
    char after = k + 1 < code.size() ? code[k + 1] : ' ';
    return std::strchr("=!<>", before) == nullptr && after != '=';  // assignment, not a comparison
  }
  if (c == '|' || c == '^') return true;
  if (c == '&') {
    // A binary & or && ends the operand; a unary & (address-of) right after an operator does not
    // occur at an operand's edge that we scan across, and is treated the same (conservative).
    return true;
  }
  return false;
}

// The span of the full expression `L op R` around the binary operator at [p, p + len), within one
// line, or false when it cannot be told without a parser (it continues on another line, it chains
// with another operator of the same family, an operand is empty).
bool OperandSpan(const std::string& code, std::size_t p, std::size_t len, std::size_t* begin,
                 std::size_t* end) {
  auto keyword_before = [&](std::size_t k) {  // an identifier ending at k is return/throw/case
    std::size_t j = k + 1;
    while (j > 0 && IsIdentChar(code[j - 1])) --j;
    std::string word = code.substr(j, k + 1 - j);
    return word == "return" || word == "throw" || word == "case" || word == "co_return";
  };
  // Left.
  int depth = 0;
  std::size_t b = std::string::npos;
  for (std::size_t k = p; k-- > 0;) {
    char c = code[k];
    if (c == ')' || c == ']' || c == '}') {
      ++depth;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (depth == 0) {
        b = k + 1;
        break;
      }
      --depth;
      continue;
    }
    if (depth != 0) continue;
    std::size_t l = 0;
    if (ComparisonAt(code, k, &l) || (k > 0 && ComparisonAt(code, k - 1, &l) && l == 2) ||
        LogicalAt(code, k) || (k > 0 && LogicalAt(code, k - 1))) {
      return false;  // chained with another comparison or logical operator: needs a parser
    }
    if (EndsOperand(code, k)) {
      b = k + 1;
      break;
    }
    if (IsIdentChar(c) && keyword_before(k)) {
      b = k + 1;
      break;
    }
  }
  if (b == std::string::npos) return false;  // reached the line start: may continue above
  // Right.
  depth = 0;
  std::size_t e = std::string::npos;
  for (std::size_t k = p + len; k < code.size(); ++k) {
    char c = code[k];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
      continue;
    }
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) {
        e = k;
        break;
      }
      --depth;
      continue;
    }
    if (depth != 0) continue;
    std::size_t l = 0;
    if (ComparisonAt(code, k, &l) || LogicalAt(code, k)) return false;
    if (EndsOperand(code, k)) {
      e = k;
      break;
    }
  }
  if (e == std::string::npos) return false;  // reached the line end: may continue below
  while (b < p && code[b] == ' ') ++b;
  while (e > p + len && code[e - 1] == ' ') --e;
  if (b >= p || e <= p + len) return false;
  *begin = b;
  *end = e;
  return true;
}

// Lines where a literal must stay a constant expression (or looks like it must): a switched
// literal is not one, and the compiler error may name another line (where a constant declared
// here is used), which the blame step could not map back.
bool NeedsConstants(const std::string& code) {
  for (const char* word : {"constexpr", "static_assert", "enum", "case ", "alignas", "template",
                           "consteval", "constinit", "const "}) {
    if (absl::StrContains(code, word)) return true;
  }
  return false;
}

// Applies mutant m to `span` (which starts at file offset span_offset). NegateCondition's original
// is the parenthesised condition; within a condition site its variant is the negated interior.
std::string Variant(const Mutant& m, const std::string& span, std::size_t span_offset) {
  if (m.mutator == kNegateCondition) return absl::StrCat("!(", span, ")");
  std::string out = span;
  out.replace(m.offset - span_offset, m.original.size(), m.replacement);
  return out;
}

}  // namespace

Schema BuildSchema(const std::string& path, const std::string& text,
                   const std::vector<Mutant>& mutants, const std::vector<int>& ids,
                   const std::set<int>& excluded_lines) {
  Schema schema;
  std::vector<bool> mask = CodeMask(text);
  std::vector<LineView> lines;
  for (std::size_t start = 0;;) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    LineView v{start, text.substr(start, end - start), ""};
    v.code = v.raw;
    for (std::size_t k = 0; k < v.code.size(); ++k) {
      if (!mask[start + k]) v.code[k] = ' ';
    }
    lines.push_back(std::move(v));
    if (end == text.size()) break;
    start = end + 1;
  }
  std::map<int, std::vector<Site>> sites;  // by 1-based line
  auto fallback = [&](std::size_t i, std::string why) { schema.fallback.push_back({i, why}); };
  for (std::size_t i = 0; i < mutants.size(); ++i) {
    const Mutant& m = mutants[i];
    if (m.line < 1 || m.line > static_cast<int>(lines.size()) || m.end_line != m.line) {
      fallback(i, "spans lines");
      continue;
    }
    if (excluded_lines.count(m.line) != 0) {
      fallback(i, "the switched line did not compile");
      continue;
    }
    const LineView& line = lines[m.line - 1];
    std::size_t col = m.offset - line.offset;  // the mutant's start within the line
    std::size_t col_end = col + m.original.size();
    if (m.mutator == kNegateCondition) {  // original is "(cond)": the site is its interior
      ++col;
      --col_end;
    }
    Site site;
    bool found = false;
    if (m.mutator == kDeleteCall) {
      site = {col, col_end, SiteKind::kStatement, {}};
      found = true;
    }
    for (auto [b, e] : Conditions(line.code)) {
      if (!found && b <= col && col_end <= e) {
        site = {b, e, SiteKind::kCondition, {}};
        found = true;
      }
    }
    for (auto [b, e] : Returns(line.code)) {
      if (!found && b <= col && col_end <= e) {
        site = {b, e, SiteKind::kExpression, {}};
        found = true;
      }
    }
    if (!found && (m.mutator == kRelational || m.mutator == kLogical)) {
      std::size_t b = 0, e = 0;
      if (OperandSpan(line.code, col, m.original.size(), &b, &e)) {
        site = {b, e, SiteKind::kExpression, {}};
        found = true;
      }
    }
    if (!found && (m.mutator == kConstantPlus || m.mutator == kConstantMinus)) {
      if (NeedsConstants(line.code)) {
        fallback(i, "the literal may need to be a constant expression");
        continue;
      }
      site = {col, col_end, SiteKind::kExpression, {}};
      found = true;
    }
    if (!found) {
      fallback(i, "no enclosing expression on one line");
      continue;
    }
    // Same span: one site; otherwise a new one (nesting is resolved below).
    std::vector<Site>& here = sites[m.line];
    auto same = std::find_if(here.begin(), here.end(), [&](const Site& s) {
      return s.begin == site.begin && s.end == site.end;
    });
    if (same == here.end()) {
      site.mutants.push_back(i);
      here.push_back(std::move(site));
    } else {
      same->mutants.push_back(i);
    }
  }
  // Nested sites merge into the one that contains them (its variants are whole-span texts, so an
  // inner mutant is just another variant); partly overlapping ones cannot be expressed: fall back.
  for (auto& [number, list] : sites) {
    std::sort(list.begin(), list.end(), [](const Site& a, const Site& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<Site> merged;
    for (Site& s : list) {
      if (!merged.empty() && s.begin < merged.back().end) {
        Site& outer = merged.back();
        if (s.end <= outer.end) {
          outer.mutants.insert(outer.mutants.end(), s.mutants.begin(), s.mutants.end());
        } else {
          for (std::size_t i : s.mutants) fallback(i, "overlaps another site");
        }
        continue;
      }
      merged.push_back(std::move(s));
    }
    list = std::move(merged);
  }
  // Emit, line by line; sites on a line are replaced right to left so earlier columns hold.
  std::string body;
  body.reserve(text.size() * 2);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string out = lines[n].raw;
    auto it = sites.find(static_cast<int>(n + 1));
    if (it != sites.end()) {
      for (auto s = it->second.rbegin(); s != it->second.rend(); ++s) {
        std::string span = out.substr(s->begin, s->end - s->begin);
        std::size_t span_offset = lines[n].offset + s->begin;
        std::string replaced;
        if (s->kind == SiteKind::kStatement) {
          for (std::size_t i : s->mutants) {
            absl::StrAppend(&replaced, "if (mutation_schema::On(", ids[i], ")) { ",
                            Variant(mutants[i], span, span_offset), " } else ");
          }
          absl::StrAppend(&replaced, "{ ", span, " }");
        } else {
          bool cond = s->kind == SiteKind::kCondition;
          auto wrap = [cond](const std::string& v) {
            return cond ? absl::StrCat("static_cast<bool>(", v, ")") : absl::StrCat("(", v, ")");
          };
          replaced = "(";
          for (std::size_t i : s->mutants) {
            absl::StrAppend(&replaced, "mutation_schema::On(", ids[i], ") ? ",
                            wrap(Variant(mutants[i], span, span_offset)), " : ");
          }
          absl::StrAppend(&replaced, wrap(span), ")");
        }
        out.replace(s->begin, s->end - s->begin, replaced);
        schema.embedded.insert(schema.embedded.end(), s->mutants.begin(), s->mutants.end());
      }
    }
    body += out;
    if (n + 1 < lines.size()) body += '\n';
  }
  std::sort(schema.embedded.begin(), schema.embedded.end());
  schema.text = absl::StrCat(kPrelude, "#line 1 \"", path, "\"\n", body);
  return schema;
}

std::set<int> BlamedLines(const std::string& compiler_output, const std::string& path) {
  // g++ prints a diagnostic as a block: "In function ...", "required from here", notes, and the
  // error line itself. A block ends where the next one's first line (a path with no leading
  // space that is not a continuation) begins; simpler and sufficient: collect every line number
  // of `path` cited in an output that has errors, block by block, keeping the blocks with an
  // "error:" in them.
  std::set<int> out;
  std::vector<absl::string_view> all = absl::StrSplit(compiler_output, '\n');
  std::vector<int> block_lines;
  bool block_has_error = false;
  auto flush = [&] {
    if (block_has_error) out.insert(block_lines.begin(), block_lines.end());
    block_lines.clear();
    block_has_error = false;
  };
  std::string needle = absl::StrCat(path, ":");
  for (absl::string_view line : all) {
    // A new block starts at "In file included", "In function", "In member function", or at an
    // "error:"/"warning:" line that follows a line of another block's notes.
    bool starts_block = absl::StrContains(line, ": In ") || absl::StartsWith(line, "In file") ||
                        absl::StartsWith(line, "ERROR:") || absl::StartsWith(line, "INFO:");
    if (starts_block) flush();
    if (absl::StrContains(line, ": error:") || absl::StrContains(line, "[-Werror")) {
      block_has_error = true;
    }
    for (std::size_t at = line.find(needle); at != absl::string_view::npos;
         at = line.find(needle, at + 1)) {
      // Bazel's compiler output names main-repository files by their relative path.
      if (at > 0 && line[at - 1] != ' ' && line[at - 1] != '\'' && line[at - 1] != '"') {
        continue;  // another file whose name ends with path (b/a/f.cc for a/f.cc)
      }
      absl::string_view rest = line.substr(at + needle.size());
      std::size_t digits = 0;
      while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
        ++digits;
      }
      int n = 0;
      if (digits > 0 && absl::SimpleAtoi(rest.substr(0, digits), &n)) block_lines.push_back(n);
    }
  }
  flush();
  return out;
}

bool ReplaceSchemaLine(const std::string& schema_text, int line, const std::string& replacement,
                       std::string* out) {
  std::size_t directive = schema_text.find("\n#line 1 \"");
  if (directive == std::string::npos || line < 1) return false;
  std::size_t start = schema_text.find('\n', directive + 1);  // end of the #line directive
  if (start == std::string::npos) return false;
  ++start;
  for (int n = 1; n < line; ++n) {
    start = schema_text.find('\n', start);
    if (start == std::string::npos) return false;
    ++start;
  }
  std::size_t end = schema_text.find('\n', start);
  if (end == std::string::npos) end = schema_text.size();
  *out = schema_text;
  out->replace(start, end - start, replacement);
  return true;
}

}  // namespace mutation

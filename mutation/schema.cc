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

// The precedence level of the binary operator at k (spaced, as the generator only mutates spaced
// operators; larger binds looser, as in the C++ grammar), its length in *len; 0 when none is there.
int LevelAt(const std::string& code, std::size_t k, std::size_t* len) {
  static const std::pair<const char*, int> kOps[] = {
      {"<=>", 8}, {"&&", 14}, {"||", 15}, {"<=", 9}, {">=", 9}, {"==", 10}, {"!=", 10},
      {"<", 9},   {">", 9},   {"&", 11},  {"^", 12}, {"|", 13}};
  for (const auto& [op, level] : kOps) {
    std::size_t l = std::strlen(op);
    if (code.compare(k, l, op) == 0 && IsSpacedOp(code, k, l)) {
      *len = l;
      return level;
    }
  }
  return 0;
}

// Whether the character at k ends any operand of a comparison or logical operator: the statement
// end, a comma, ?: (`::` is scope), and assignment (not the `=` of a comparison).
bool EndsEveryOperand(const std::string& code, std::size_t k) {
  char c = code[k];
  if (c == ';' || c == ',' || c == '?') return true;
  if (c == ':') {
    return !((k > 0 && code[k - 1] == ':') || (k + 1 < code.size() && code[k + 1] == ':'));
  }
  if (c == '=') {
    char before = k > 0 ? code[k - 1] : ' ';
    char after = k + 1 < code.size() ? code[k + 1] : ' ';
    return std::strchr("=!<>", before) == nullptr && after != '=';
  }
  return false;
}

// The span of the full expression `L op R` around the binary operator at [p, p + len) of
// precedence `level`, within one line, or false when it cannot be told without a parser (it
// continues on another line, or chains with an operator of the same level). An operator that
// binds tighter belongs to an operand; one that binds looser ends it. `raw` is the line as
// written (code has literals blanked), used to trim the span.
bool OperandSpan(const std::string& code, const std::string& raw, std::size_t p, std::size_t len,
                 std::size_t* begin, std::size_t* end) {
  std::size_t dummy = 0;
  const int level = LevelAt(code, p, &dummy);
  if (level == 0) return false;
  auto keyword_before = [&](std::size_t k) {  // an identifier ending at k is return/throw/case
    std::size_t j = k + 1;
    while (j > 0 && IsIdentChar(code[j - 1])) --j;
    std::string word = code.substr(j, k + 1 - j);
    return word == "return" || word == "throw" || word == "case" || word == "co_return";
  };
  // The binary operators of the line, left to right, so `&&` is one operator and not two `&`.
  std::vector<int> op_level(code.size(), 0);
  std::vector<std::size_t> op_start(code.size(), std::string::npos);
  for (std::size_t k = 0; k < code.size();) {
    std::size_t l = 0;
    int q = LevelAt(code, k, &l);
    if (q == 0) {
      ++k;
      continue;
    }
    for (std::size_t j = k; j < k + l; ++j) {
      op_level[j] = q;
      op_start[j] = k;
    }
    k += l;
  }
  // Left: walk back over tokens at depth 0.
  int depth = 0;
  std::size_t b = std::string::npos;
  for (std::size_t k = p; k-- > 0;) {
    char c = code[k];
    if (op_level[k] != 0) {
      int q = op_level[k];
      std::size_t start = op_start[k];
      if (depth == 0) {
        if (q == level) return false;
        if (q > level) {
          b = k + 1;
          break;
        }
      }
      k = start;  // skip the operator
      continue;
    }
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
    if (EndsEveryOperand(code, k)) {
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
    if (EndsEveryOperand(code, k)) {
      e = k;
      break;
    }
    if (int q = op_level[k]; q != 0 && op_start[k] == k) {
      if (q == level) return false;
      if (q > level) {
        e = k;
        break;
      }
    }
  }
  if (e == std::string::npos) return false;  // reached the line end: may continue below
  while (b < p && raw[b] == ' ') ++b;
  while (e > p + len && raw[e - 1] == ' ') --e;
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
                           "consteval", "constinit", "static const "}) {
    if (absl::StrContains(code, word)) return true;
  }
  // A `const` at namespace scope (no indentation) is usable in constant expressions; a local
  // `const` rarely is, and when it is the compiler's note names its line for the next round.
  return absl::StartsWith(code, "const ");
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
                   const std::set<int>& excluded_lines, int first_probe_id) {
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
  // Function probes: a switch id at the top of every function body outside other functions, so
  // the coverage run also says which tests enter the function around a mutant that could not be
  // switched (a sound over-approximation of who reaches its line).
  std::map<int, std::vector<std::pair<std::size_t, int>>> probe_cols;  // line -> (column, id)
  std::set<int> constexpr_lines;  // lines of constexpr function bodies
  {
    enum class Brace { kScope, kFunction, kConstexprFunction, kBlock };
    std::vector<std::pair<Brace, std::size_t>> stack;  // kind, index into schema.probes
    std::string previous;  // the last non-blank code line before the current one
    std::string decl;
    int next_probe = first_probe_id;
    for (std::size_t n = 0; n < lines.size(); ++n) {
      const std::string& code = lines[n].code;
      for (std::size_t k = 0; k < code.size(); ++k) {
        bool at_scope = std::all_of(stack.begin(), stack.end(), [](const auto& b) {
          return b.first == Brace::kScope;
        });
        // The declaration being read at namespace or class scope, since the last ; { or }.
        if (at_scope && code[k] != '{' && code[k] != '}') {
          if (code[k] == ';') {
            decl.clear();
          } else {
            decl += code[k];
          }
        }
        if (code[k] == '}') {
          decl.clear();
          if (!stack.empty()) {
            if (stack.back().first == Brace::kFunction) {
              schema.probes[stack.back().second].last_line = static_cast<int>(n + 1);
            }
            if (stack.back().first == Brace::kConstexprFunction) {
              for (int l = static_cast<int>(stack.back().second); l <= static_cast<int>(n + 1); ++l) {
                constexpr_lines.insert(l);
              }
            }
            stack.pop_back();
          }
          continue;
        }
        if (code[k] != '{') continue;
        bool in_function = std::any_of(stack.begin(), stack.end(), [](const auto& b) {
          return b.first != Brace::kScope;
        });
        std::string head(absl::StripAsciiWhitespace(code.substr(0, k)));
        std::string context = head.empty() ? previous : head;
        Brace kind = Brace::kScope;
        if (in_function) {
          kind = Brace::kBlock;
        } else if (!absl::StartsWith(context, "namespace") && !absl::StartsWith(context, "class ") &&
                   !absl::StartsWith(context, "struct ") && !absl::StartsWith(context, "union ") &&
                   !absl::StartsWith(context, "enum") && !absl::StartsWith(context, "extern") &&
                   (absl::EndsWith(context, ")") || absl::EndsWith(context, " const") ||
                    absl::EndsWith(context, " override") || absl::EndsWith(context, " final") ||
                    absl::EndsWith(context, " noexcept") || absl::EndsWith(context, " mutable"))) {
          // A constexpr function may run at compile time, where no switch can: no probe and no
          // site in its body.
          kind = absl::StrContains(decl, "constexpr") || absl::StrContains(decl, "consteval")
                     ? Brace::kConstexprFunction
                     : Brace::kFunction;
        } else if (absl::StrContains(decl, "constexpr") || absl::StrContains(decl, "constinit")) {
          // The initializer of a constexpr variable (a table over many lines) is a constant
          // expression too: the same treatment as a constexpr function body.
          kind = Brace::kConstexprFunction;
        }
        std::size_t probe = 0;
        if (kind == Brace::kFunction && first_probe_id > 0 &&
            excluded_lines.count(static_cast<int>(n + 1)) == 0) {
          probe = schema.probes.size();
          schema.probes.push_back({next_probe, static_cast<int>(n + 1), static_cast<int>(n + 1)});
          probe_cols[static_cast<int>(n + 1)].push_back({k + 1, next_probe++});
        } else if (kind == Brace::kFunction) {
          kind = Brace::kBlock;  // a function whose probe did not compile: no probe, still a body
        }
        if (kind == Brace::kConstexprFunction) probe = n + 1;  // its first line
        stack.push_back({kind, probe});
        decl.clear();
      }
      if (code.find_first_not_of(' ') != std::string::npos) {
        previous = std::string(absl::StripAsciiWhitespace(code));
      }
      decl += ' ';
    }
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
    if (constexpr_lines.count(m.line) != 0) {
      fallback(i, "inside a constexpr function or initializer");
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
    for (auto [b, e] : OneLineConditions(line.code)) {
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
      if (OperandSpan(line.code, line.raw, col, m.original.size(), &b, &e)) {
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
  // Emit, line by line; edits on a line are applied right to left so earlier columns hold.
  std::string body;
  body.reserve(text.size() * 2);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string out = lines[n].raw;
    auto it = sites.find(static_cast<int>(n + 1));
    auto probes_here = probe_cols.find(static_cast<int>(n + 1));
    // Probes are insertions; a probe right of a site is applied first, so both keep their columns.
    std::vector<std::pair<std::size_t, int>> cols;  // ascending columns
    if (probes_here != probe_cols.end()) cols = probes_here->second;
    auto insert_probes_from = [&](std::size_t from) {
      while (!cols.empty() && cols.back().first >= from) {
        out.insert(cols.back().first, absl::StrCat(" mutation_schema::On(", cols.back().second, ");"));
        cols.pop_back();
      }
    };
    if (it != sites.end()) {
      for (auto s = it->second.rbegin(); s != it->second.rend(); ++s) {
        insert_probes_from(s->end);
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
    insert_probes_from(0);
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

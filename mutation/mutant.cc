#include "mutation/mutant.h"

#include <algorithm>
#include <sstream>

namespace mutation {

const char* StatusName(MutantStatus status) {
  switch (status) {
    case MutantStatus::kPending: return "Pending";
    case MutantStatus::kKilled: return "Killed";
    case MutantStatus::kSurvived: return "Survived";
    case MutantStatus::kTimeout: return "Timeout";
    case MutantStatus::kCompileError: return "CompileError";
    case MutantStatus::kNoCoverage: return "NoCoverage";
    case MutantStatus::kRuntimeError: return "RuntimeError";
    case MutantStatus::kIgnored: return "Ignored";
  }
  return "RuntimeError";
}

bool ApplyMutant(const Mutant& m, const std::string& text, std::string* out) {
  if (m.offset > text.size() || text.compare(m.offset, m.original.size(), m.original) != 0) {
    return false;
  }
  std::string result = text.substr(0, m.offset);
  result += m.replacement;
  result += text.substr(m.offset + m.original.size());
  if (result == text) return false;
  *out = std::move(result);
  return true;
}

std::vector<std::string> SourceLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

namespace {

}  // namespace

void LocateMutant(const std::string& text, Mutant* m) {
  auto position = [&text](std::size_t off, int* line, int* col) {
    *line = 1;
    *col = 1;
    for (std::size_t i = 0; i < off && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++*line;
        *col = 1;
      } else {
        ++*col;
      }
    }
  };
  position(m->offset, &m->line, &m->column);
  position(m->offset + m->original.size(), &m->end_line, &m->end_column);
}

std::string MutantDiff(const Mutant& m, const std::string& text, int context) {
  std::string mutated;
  if (!ApplyMutant(m, text, &mutated)) return "";
  std::vector<std::string> before = SourceLines(text);
  std::vector<std::string> after = SourceLines(mutated);
  // The change spans lines [line, end_line] in `before`; in `after` that region grew or shrank by
  // the difference in line counts.
  int first = std::max(1, m.line - context);
  int last_before = std::min<int>(before.size(), m.end_line + context);
  int delta = static_cast<int>(after.size()) - static_cast<int>(before.size());
  int last_after = std::min<int>(after.size(), last_before + delta);
  std::ostringstream out;
  out << "--- a/" << m.file << "\n+++ b/" << m.file << "\n";
  out << "@@ -" << first << "," << (last_before - first + 1) << " +" << first << ","
      << (last_after - first + 1) << " @@\n";
  int i = first;
  // Context before the change.
  for (; i < m.line; ++i) out << " " << before[i - 1] << "\n";
  int changed_before_end = m.end_line;
  int changed_after_end = m.end_line + delta;
  for (int k = m.line; k <= changed_before_end && k <= static_cast<int>(before.size()); ++k) {
    out << "-" << before[k - 1] << "\n";
  }
  for (int k = m.line; k <= changed_after_end && k <= static_cast<int>(after.size()); ++k) {
    out << "+" << after[k - 1] << "\n";
  }
  for (int k = changed_before_end + 1; k <= last_before; ++k) out << " " << before[k - 1] << "\n";
  return out.str();
}

}  // namespace mutation

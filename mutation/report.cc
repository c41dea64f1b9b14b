#include "mutation/report.h"

#include <cstdio>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace mutation {

Score ScoreOf(const std::vector<Mutant>& mutants, bool curated) {
  Score s;
  for (const Mutant& m : mutants) {
    if (m.curated != curated) continue;
    switch (m.status) {
      case MutantStatus::kKilled: ++s.killed; break;
      case MutantStatus::kSurvived: ++s.survived; break;
      case MutantStatus::kTimeout: ++s.timeout; break;
      case MutantStatus::kNoCoverage: ++s.no_coverage; break;
      case MutantStatus::kCompileError: ++s.compile_error; break;
      case MutantStatus::kRuntimeError: ++s.runtime_error; break;
      case MutantStatus::kPending: ++s.pending; break;
      case MutantStatus::kIgnored: ++s.ignored; break;
    }
  }
  return s;
}

nlohmann::json JsonReport(const std::vector<Mutant>& mutants,
                          const std::map<std::string, std::string>& sources,
                          const Thresholds& thresholds) {
  nlohmann::json files = nlohmann::json::object();
  for (const Mutant& m : mutants) {
    nlohmann::json& file = files[m.file];
    if (!file.contains("language")) {
      file["language"] = "cpp";
      auto src = sources.find(m.file);
      file["source"] = src == sources.end() ? "" : src->second;
      file["mutants"] = nlohmann::json::array();
    }
    nlohmann::json j = {
        {"id", m.id},
        {"mutatorName", m.mutator},
        {"replacement", m.replacement},
        {"location",
         {{"start", {{"line", m.line}, {"column", m.column}}},
          {"end", {{"line", m.end_line}, {"column", m.end_column}}}}},
        {"status", StatusName(m.status)},
        {"killedBy", m.killed_by},
        {"coveredBy", m.covered_by},
        {"static", false},
    };
    if (!m.status_reason.empty()) j["statusReason"] = m.status_reason;
    if (m.curated) j["description"] = absl::StrCat(m.boundary, ": ", m.why);
    if (m.seconds > 0) j["duration"] = static_cast<long long>(m.seconds * 1000);
    file["mutants"].push_back(std::move(j));
  }
  return {
      {"$schema",
       "https://git.io/mutation-testing-schema"},  // an identifier, never fetched
      {"schemaVersion", "1"},
      {"thresholds", {{"high", thresholds.high}, {"low", thresholds.low}}},
      {"projectRoot", "."},
      {"framework", {{"name", "sandboxed-agent mutation (bazel run //mutation:check)"}}},
      {"files", files},
  };
}

namespace {

// "87.5%", or "n/a" when no generated mutant was judged (a curated-only run has no score).
std::string ScoreText(const Score& s) {
  return s.valid() == 0 ? "n/a" : absl::StrFormat("%.1f%%", s.percent());
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* CssClass(MutantStatus s) {
  switch (s) {
    case MutantStatus::kKilled:
    case MutantStatus::kTimeout: return "det";
    case MutantStatus::kSurvived:
    case MutantStatus::kNoCoverage: return "und";
    default: return "oth";
  }
}


}  // namespace

std::string HtmlReport(const std::vector<Mutant>& mutants,
                       const std::map<std::string, std::string>& sources,
                       const Thresholds& thresholds) {
  std::map<std::string, std::vector<const Mutant*>> by_file;
  for (const Mutant& m : mutants) by_file[m.file].push_back(&m);
  Score gen = ScoreOf(mutants, false);
  Score cur = ScoreOf(mutants, true);
  std::ostringstream h;
  // Everything inline: the page must open from a CI artifact with no network.
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<title>Mutation report</title><style>\n"
       "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
       "pre{margin:0}.det{background:#d7f5d7}.und{background:#f8d0d0}.oth{background:#eee}"
       ".src td{border:none;font-family:monospace;white-space:pre}"
       ".ln{color:#888;text-align:right}.mut{font-size:85%}"
       "</style></head><body>\n<h1>Mutation report</h1>\n";
  h << absl::StrFormat(
      "<p>Curated: %d killed, %d timeout, %d survived, %d no coverage, %d unviable.<br>"
      "Generated: score %s (high %d, low %d, break %d): %d killed, %d timeout, %d survived, "
      "%d no coverage, %d unviable, %d pending.</p>\n",
      cur.killed, cur.timeout, cur.survived, cur.no_coverage, cur.compile_error, ScoreText(gen),
      thresholds.high, thresholds.low, thresholds.break_at, gen.killed, gen.timeout, gen.survived,
      gen.no_coverage, gen.compile_error, gen.pending);
  h << "<table><tr><th>file</th><th>mutants</th><th>detected</th><th>undetected</th></tr>\n";
  for (const auto& [file, ms] : by_file) {
    int det = 0, und = 0;
    for (const Mutant* m : ms) {
      det += std::string(CssClass(m->status)) == "det";
      und += std::string(CssClass(m->status)) == "und";
    }
    h << "<tr><td><a href=\"#" << Escape(file) << "\">" << Escape(file) << "</a></td><td>"
      << ms.size() << "</td><td>" << det << "</td><td>" << und << "</td></tr>\n";
  }
  h << "</table>\n";
  for (const auto& [file, ms] : by_file) {
    h << "<h2 id=\"" << Escape(file) << "\">" << Escape(file) << "</h2>\n<table class=\"src\">\n";
    std::map<int, std::vector<const Mutant*>> by_line;
    for (const Mutant* m : ms) by_line[m->line].push_back(m);
    auto src = sources.find(file);
    std::vector<std::string> lines = SourceLines(src == sources.end() ? "" : src->second);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      int ln = static_cast<int>(i) + 1;
      auto it = by_line.find(ln);
      std::string cls;
      if (it != by_line.end()) {
        cls = "det";
        for (const Mutant* m : it->second) {
          if (std::string(CssClass(m->status)) == "und") cls = "und";
        }
      }
      h << "<tr" << (cls.empty() ? "" : absl::StrCat(" class=\"", cls, "\"")) << "><td class=\"ln\">"
        << ln << "</td><td>" << Escape(lines[i]) << "</td></tr>\n";
      if (it == by_line.end()) continue;
      for (const Mutant* m : it->second) {
        h << "<tr class=\"mut " << CssClass(m->status) << "\"><td></td><td>" << StatusName(m->status)
          << " &middot; " << Escape(m->mutator) << " &middot; " << Escape(m->id) << " &middot; "
          << Escape(m->original) << " &rarr; " << Escape(m->replacement);
        if (!m->killed_by.empty()) h << " &middot; killed by " << Escape(absl::StrJoin(m->killed_by, ", "));
        if (m->curated) h << "<br>" << Escape(m->boundary) << ": " << Escape(m->why);
        if (!m->status_reason.empty()) h << "<br>" << Escape(m->status_reason);
        h << "</td></tr>\n";
      }
    }
    h << "</table>\n";
  }
  h << "</body></html>\n";
  return h.str();
}

std::string TerminalSummary(const std::vector<Mutant>& mutants,
                            const std::map<std::string, std::string>& sources,
                            const Thresholds& thresholds) {
  std::ostringstream out;
  for (const Mutant& m : mutants) {
    bool missed = m.status == MutantStatus::kSurvived || m.status == MutantStatus::kNoCoverage ||
                  (m.curated && m.status != MutantStatus::kKilled &&
                   m.status != MutantStatus::kTimeout && m.status != MutantStatus::kPending);
    if (!missed) continue;
    out << (m.curated ? "CURATED " : "") << StatusName(m.status) << ": " << m.file << ":" << m.line
        << " " << m.mutator << " (" << m.id << ")\n";
    if (m.curated) out << "  boundary: " << m.boundary << "\n  why: " << m.why << "\n";
    if (!m.status_reason.empty()) out << "  reason: " << m.status_reason << "\n";
    out << "  tests that ran: "
        << (m.covered_by.empty() ? "(none)" : absl::StrJoin(m.covered_by, " ")) << "\n";
    auto src = sources.find(m.file);
    if (src != sources.end()) {
      std::istringstream diff(MutantDiff(m, src->second));
      for (std::string line; std::getline(diff, line);) out << "    " << line << "\n";
    }
  }
  Score cur = ScoreOf(mutants, true);
  Score gen = ScoreOf(mutants, false);
  out << absl::StrFormat(
      "curated:   %d mutants: %d killed, %d timeout, %d survived, %d no coverage, %d unviable, "
      "%d bazel errors, %d not run\n",
      cur.valid() + cur.compile_error + cur.runtime_error + cur.pending, cur.killed, cur.timeout,
      cur.survived, cur.no_coverage, cur.compile_error, cur.runtime_error, cur.pending);
  out << absl::StrFormat(
      "generated: %d mutants: %d killed, %d timeout, %d survived, %d no coverage, %d unviable, "
      "%d bazel errors, %d not run, %d not built in this configuration; score %s (break below "
      "%d%%)\n",
      gen.valid() + gen.compile_error + gen.runtime_error + gen.pending + gen.ignored, gen.killed,
      gen.timeout, gen.survived, gen.no_coverage, gen.compile_error, gen.runtime_error,
      gen.pending, gen.ignored, ScoreText(gen), thresholds.break_at);
  return out.str();
}

}  // namespace mutation

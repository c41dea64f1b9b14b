#include "mutation/catalog.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace mutation {
namespace {

absl::Status Field(const nlohmann::json& entry, const char* name, std::size_t index,
                   std::string* out) {
  auto it = entry.find(name);
  if (it == entry.end() || !it->is_string() || it->get<std::string>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "catalog entry #", index, ": field \"", name, "\" must be a non-empty string"));
  }
  *out = it->get<std::string>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Catalog> ParseCatalog(const std::string& json_text) {
  nlohmann::json root = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false,
                                              /*ignore_comments=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return absl::InvalidArgumentError("catalog: not a JSON object");
  }
  Catalog catalog;
  if (auto t = root.find("thresholds"); t != root.end()) {
    if (!t->is_object()) return absl::InvalidArgumentError("catalog: thresholds must be an object");
    catalog.thresholds.high = t->value("high", catalog.thresholds.high);
    catalog.thresholds.low = t->value("low", catalog.thresholds.low);
    catalog.thresholds.break_at = t->value("break", catalog.thresholds.break_at);
  }
  const Thresholds& th = catalog.thresholds;
  if (!(0 <= th.break_at && th.break_at <= 100 && 0 <= th.low && th.low <= th.high &&
        th.high <= 100)) {
    return absl::InvalidArgumentError(
        "catalog: thresholds need 0 <= break <= 100 and 0 <= low <= high <= 100");
  }
  auto mutants = root.find("mutants");
  if (mutants == root.end() || !mutants->is_array()) {
    return absl::InvalidArgumentError("catalog: \"mutants\" must be an array");
  }
  std::set<std::string> ids;
  for (std::size_t i = 0; i < mutants->size(); ++i) {
    const nlohmann::json& j = (*mutants)[i];
    if (!j.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("catalog entry #", i, ": not an object"));
    }
    CatalogEntry e;
    for (auto [name, out] : {std::pair{"id", &e.id}, std::pair{"file", &e.file},
                             std::pair{"original", &e.original},
                             std::pair{"boundary", &e.boundary}, std::pair{"why", &e.why}}) {
      absl::Status s = Field(j, name, i, out);
      if (!s.ok()) return s;
    }
    // The replacement may be empty (a deleted call), but it must be present and a string.
    auto repl = j.find("replacement");
    if (repl == j.end() || !repl->is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "catalog entry #", i, " (", e.id, "): field \"replacement\" must be a string"));
    }
    e.replacement = repl->get<std::string>();
    if (e.replacement == e.original) {
      return absl::InvalidArgumentError(
          absl::StrCat("catalog entry ", e.id, ": replacement equals original; nothing mutates"));
    }
    if (!ids.insert(e.id).second) {
      return absl::InvalidArgumentError(absl::StrCat("catalog: duplicate id ", e.id));
    }
    catalog.entries.push_back(std::move(e));
  }
  return catalog;
}

int CountOccurrences(const std::string& haystack, const std::string& needle) {
  if (needle.empty()) return 0;
  int count = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

absl::StatusOr<std::vector<Mutant>> ResolveCatalog(const Catalog& catalog, const FileReader& read) {
  std::vector<Mutant> out;
  std::vector<std::string> problems;
  for (const CatalogEntry& e : catalog.entries) {
    absl::StatusOr<std::string> text = read(e.file);
    if (!text.ok()) {
      problems.push_back(absl::StrCat(e.id, ": cannot read ", e.file, ": ", text.status().message()));
      continue;
    }
    int count = CountOccurrences(*text, e.original);
    if (count != 1) {
      problems.push_back(absl::StrCat(
          e.id, ": the original snippet occurs ", count, " times in ", e.file,
          count == 0 ? " (the code changed: update the entry to follow it)"
                     : " (ambiguous: lengthen the snippet until it is unique)",
          "; snippet: ", e.original));
      continue;
    }
    Mutant m;
    m.id = absl::StrCat("catalog:", e.id);
    m.file = e.file;
    m.mutator = "Curated";
    m.curated = true;
    m.boundary = e.boundary;
    m.why = e.why;
    m.offset = text->find(e.original);
    m.original = e.original;
    m.replacement = e.replacement;
    LocateMutant(*text, &m);
    out.push_back(std::move(m));
  }
  if (!problems.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "catalog does not match the source (", problems.size(), " of ", catalog.entries.size(),
        " entries):\n  ", absl::StrJoin(problems, "\n  ")));
  }
  return out;
}

}  // namespace mutation

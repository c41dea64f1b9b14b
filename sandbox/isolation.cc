// The platform-independent half of isolation.h: layer names, parsing, and the doctor's rendering.
#include <sys/utsname.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "sandbox/errors.h"
#include "sandbox/isolation.h"

namespace sandbox {
namespace {

struct LayerRow {
  Layer layer;
  const char* name;
};

constexpr LayerRow kLayerTable[] = {
    {Layer::kUserNs, "userns"},   {Layer::kMountNs, "mountns"},     {Layer::kPidNs, "pidns"},
    {Layer::kNetNs, "netns"},     {Layer::kIpcNs, "ipcns"},         {Layer::kUtsNs, "utsns"},
    {Layer::kCgroup, "cgroup"},   {Layer::kReaper, "reaper"},       {Layer::kCapabilities, "caps"},
    {Layer::kNoNewPrivs, "nnp"},  {Layer::kLandlock, "landlock"},   {Layer::kSeccomp, "seccomp"},
};

}  // namespace

const std::vector<Layer>& AllLayers() {
  static const auto* all = [] {
    auto* v = new std::vector<Layer>();
    for (const LayerRow& row : kLayerTable) v->push_back(row.layer);
    return v;
  }();
  return *all;
}

absl::string_view LayerName(Layer layer) {
  for (const LayerRow& row : kLayerTable) {
    if (row.layer == layer) return row.name;
  }
  return "unknown";
}

absl::StatusOr<Layer> ParseLayer(absl::string_view name) {
  for (const LayerRow& row : kLayerTable) {
    if (name == row.name) return row.layer;
  }
  std::vector<std::string> known;
  for (const LayerRow& row : kLayerTable) known.push_back(row.name);
  return MakeError(ErrorCode::kEINVAL, absl::StrCat("unknown isolation layer '", name,
                                                    "'; known: ", absl::StrJoin(known, ", "), ", all"));
}

absl::StatusOr<std::set<Layer>> ParseLayerList(absl::string_view list) {
  std::set<Layer> out;
  for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    if (item == "all") {
      out.insert(AllLayers().begin(), AllLayers().end());
      continue;
    }
    absl::StatusOr<Layer> layer = ParseLayer(item);
    if (!layer.ok()) return layer.status();
    out.insert(*layer);
  }
  return out;
}

IsolationOptions IsolationOptions::AllLayers() {
  IsolationOptions o;
  o.enabled.insert(sandbox::AllLayers().begin(), sandbox::AllLayers().end());
  return o;
}

absl::StatusOr<IsolationOptions> IsolationFromFlags(const IsolationFlagValues& flags, const std::string& workspace) {
  IsolationOptions o;
  absl::StatusOr<std::set<Layer>> enabled = ParseLayerList(flags.isolate);
  if (!enabled.ok()) return MakeError(ErrorCode::kEINVAL, absl::StrCat("--isolate: ", enabled.status().message()));
  absl::StatusOr<std::set<Layer>> removed = ParseLayerList(flags.no_isolate);
  if (!removed.ok()) return MakeError(ErrorCode::kEINVAL, absl::StrCat("--no-isolate: ", removed.status().message()));
  absl::StatusOr<std::set<Layer>> required = ParseLayerList(flags.require);
  if (!required.ok()) return MakeError(ErrorCode::kEINVAL, absl::StrCat("--require: ", required.status().message()));
  for (Layer layer : *removed) {
    if (required->count(layer)) {
      return MakeError(ErrorCode::kEINVAL, absl::StrCat("--require and --no-isolate both name ", LayerName(layer)));
    }
    enabled->erase(layer);
  }
  o.enabled = std::move(*enabled);
  o.required = std::move(*required);
  o.workspace = workspace;
  o.allow_network = flags.allow_network;
  if (flags.seccomp == "default") {
    o.seccomp_profile = SeccompProfileKind::kDefault;
  } else if (flags.seccomp == "strict") {
    o.seccomp_profile = SeccompProfileKind::kStrict;
  } else {
    return MakeError(ErrorCode::kEINVAL, absl::StrCat("--seccomp: unknown profile '", flags.seccomp,
                                                      "' (default or strict)"));
  }
  if (flags.memory_bytes) o.memory_bytes = flags.memory_bytes;
  if (flags.pids) o.pids = flags.pids;
  if (flags.cpu_millis) o.cpu_millis = flags.cpu_millis;
  return o;
}

bool WantsIsolation(const IsolationOptions& options) {
  return !options.enabled.empty() || !options.required.empty();
}

std::string DoctorText(const DoctorReport& report) {
  std::string out = absl::StrCat("platform: ", report.platform, "\n");
  for (const LayerStatus& s : report.layers) {
    absl::StrAppend(&out, "  ", LayerName(s.layer), std::string(10 - std::min<size_t>(9, LayerName(s.layer).size()), ' '),
                    s.available ? "available    " : "unavailable  ", s.detail, "\n");
  }
  for (const auto& [key, value] : report.facts) absl::StrAppend(&out, key, ": ", value, "\n");
  return out;
}

std::string DoctorJson(const DoctorReport& report) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerStatus& s : report.layers) {
    layers.push_back({{"layer", std::string(LayerName(s.layer))}, {"available", s.available}, {"detail", s.detail}});
  }
  nlohmann::json facts = nlohmann::json::object();
  for (const auto& [key, value] : report.facts) facts[key] = value;
  return nlohmann::json({{"platform", report.platform}, {"layers", layers}, {"facts", facts}}).dump();
}

}  // namespace sandbox

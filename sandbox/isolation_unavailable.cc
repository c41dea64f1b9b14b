// isolation.h for builds without the Linux kernel layers (--config=portable, macOS): every layer is
// unavailable, a required layer fails closed, and the portable runner runs the command.
#include "absl/strings/str_cat.h"
#include "sandbox/errors.h"
#include "sandbox/isolation.h"

namespace sandbox {
namespace {
constexpr char kWhy[] = "not in this build (portable: sandbox/linux is excluded)";
}  // namespace

std::vector<LayerStatus> ProbeLayers() {
  std::vector<LayerStatus> out;
  for (Layer layer : AllLayers()) out.push_back({layer, false, kWhy});
  return out;
}

DoctorReport Doctor() {
  return {"portable build", ProbeLayers(), {{"kernel_layers", "off (--config=portable or non-Linux)"}}};
}

absl::StatusOr<RunResult> RunIsolated(const RunRequest& request, const IsolationOptions& isolation) {
  for (Layer layer : isolation.required) {
    return MakeError(ErrorCode::kEUNSUPPORTED,
                     absl::StrCat("required isolation layer ", LayerName(layer), " is unavailable: ", kWhy));
  }
  absl::StatusOr<RunResult> result = Run(request);
  if (!result.ok()) return result;
  for (Layer layer : isolation.enabled) result->layers_unavailable.push_back(absl::StrCat(LayerName(layer), ": ", kWhy));
  return result;
}

struct IsolationPool::Impl {
  IsolationOptions options;
};

IsolationPool::IsolationPool(IsolationOptions options) : impl_(new Impl{std::move(options)}) {}
IsolationPool::~IsolationPool() = default;
absl::StatusOr<RunResult> IsolationPool::Run(const RunRequest& request) { return RunIsolated(request, impl_->options); }
void IsolationPool::WaitIdle() {}

}  // namespace sandbox

#include "sandbox/run_result_json.h"

#include <signal.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "sandbox/errors.h"
#include "sandbox/quote.h"

namespace sandbox {
namespace {

struct NamedSignal {
  int number;
  const char* name;
};

constexpr NamedSignal kSignals[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
};

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

nlohmann::json StreamToJson(const StreamCapture& stream) {
  bool lossy = false;
  std::string text = ToValidUtf8(stream.data, &lossy);
  return {{"data", std::move(text)},
          {"truncated", stream.truncated},
          {"kept_bytes", stream.data.size()},
          {"total_bytes", stream.total_bytes},
          {"utf8_lossy", lossy}};
}

}  // namespace

std::string ToValidUtf8(absl::string_view bytes, bool* lossy) {
  std::string out;
  out.reserve(bytes.size());
  *lossy = false;
  for (size_t i = 0; i < bytes.size();) {
    const size_t length = Utf8SequenceLength(bytes, i);
    if (length == 0) {
      out.append("\xEF\xBF\xBD");
      *lossy = true;
      ++i;
    } else {
      out.append(bytes.data() + i, length);
      i += length;
    }
  }
  return out;
}

std::string SignalName(int signal) {
  for (const NamedSignal& named : kSignals) {
    if (named.number == signal) return named.name;
  }
  return absl::StrCat("SIG", signal);
}

nlohmann::json RunResultToJson(const RunResult& result) {
  nlohmann::json json = {
      {"exit_code", nullptr},
      {"term_signal", nullptr},
      {"signal_name", nullptr},
      {"timed_out", result.timed_out},
      {"cancelled", result.cancelled},
      {"wall_ms", Ms(result.wall_time)},
      {"user_cpu_ms", Ms(result.user_cpu)},
      {"system_cpu_ms", Ms(result.system_cpu)},
      {"peak_rss_kb", result.peak_rss_kb},
      {"pid", result.pid},
      {"pgid", result.pgid},
      {"stdout", StreamToJson(result.out)},
      {"stderr", StreamToJson(result.err)},
      {"limits_in_force", result.limits_in_force},
      {"layers_in_force", result.layers_in_force},
      {"layers_unavailable", result.layers_unavailable},
      {"memory_limit_killed", result.memory_limit_killed},
  };
  if (result.exit_code.has_value()) json["exit_code"] = *result.exit_code;
  if (result.term_signal.has_value()) {
    json["term_signal"] = *result.term_signal;
    json["signal_name"] = SignalName(*result.term_signal);
  }
  return json;
}

nlohmann::json ErrorToJson(const absl::Status& status) {
  const ErrorInfo& info = Info(CodeOf(status));
  bool lossy = false;
  return {{"code", std::string(info.name)},
          {"message", ToValidUtf8(status.message(), &lossy)},
          {"retryable", info.retryable},
          {"suggested_action", std::string(info.suggested_action)}};
}

}  // namespace sandbox

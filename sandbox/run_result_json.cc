#include "sandbox/run_result_json.h"

#include <signal.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "sandbox/errors.h"

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

// Length of the valid UTF-8 sequence at s[i], or 0 if none starts there (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF).
size_t ValidSequenceLength(absl::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t length;
  uint8_t low = 0x80, high = 0xBF;  // Allowed range of the second byte.
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;
    if (b0 == 0xED) high = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;
    if (b0 == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string ToValidUtf8(absl::string_view bytes, bool* lossy) {
  std::string out;
  out.reserve(bytes.size());
  *lossy = false;
  for (size_t i = 0; i < bytes.size();) {
    const size_t length = ValidSequenceLength(bytes, i);
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

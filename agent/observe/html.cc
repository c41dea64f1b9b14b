#include "agent/observe/html.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sandbox/quote.h"

namespace agent::observe {

using nlohmann::json;

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

namespace {

// Pretty JSON, invalid UTF-8 replaced, escaped for HTML.
std::string JsonBlock(const json& v) {
  return HtmlEscape(v.dump(2, ' ', false, json::error_handler_t::replace));
}

// A string field of a line as escaped text, or `fallback`.
std::string Field(const json& line, const char* key, const std::string& fallback = "") {
  if (!line.is_object() || !line.contains(key)) return HtmlEscape(fallback);
  const json& v = line[key];
  if (v.is_string()) return HtmlEscape(v.get<std::string>());
  if (v.is_null()) return HtmlEscape(fallback);
  return HtmlEscape(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

// At most `max` bytes of `text`, cut at a UTF-8 character boundary, with "..." when cut.
std::string Abbreviate(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  return absl::StrCat(sandbox::Utf8Head(text, max - 3), "...");
}

constexpr char kStyle[] = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 8px}
table.meta{border-collapse:collapse;margin-bottom:16px}
table.meta th{text-align:left;padding:2px 12px 2px 0;color:#5a6275;font-weight:600}
table.meta td{padding:2px 0;font-family:ui-monospace,monospace}
.stop-done{color:#17813a;font-weight:700}.stop-other{color:#b3261e;font-weight:700}
.head,.row{display:grid;grid-template-columns:56px 150px 90px 90px 240px 110px 1fr;gap:8px;
 align-items:center;padding:6px 8px}
.head{font-weight:600;color:#5a6275;border-bottom:2px solid #d5d9e2}
details{border-bottom:1px solid #e3e6ec;background:#fff}
details[open]{background:#f3f6fb}
summary{list-style:none;cursor:pointer}
summary::-webkit-details-marker{display:none}
.ok{color:#17813a;font-weight:600}.fail{color:#b3261e;font-weight:600}
.code{font-family:ui-monospace,monospace;color:#b3261e}
.bar{height:10px;background:#4f7ddb;border-radius:2px;min-width:2px}
.bar.failbar{background:#d9534f}
.body{padding:4px 16px 12px 72px}
.body h3{font-size:13px;margin:10px 0 4px;color:#5a6275}
pre{margin:0;padding:8px;background:#fff;border:1px solid #e3e6ec;overflow:auto;max-height:420px;
 white-space:pre-wrap;word-break:break-all;font:12px/1.35 ui-monospace,monospace}
.note{color:#5a6275;margin-top:12px}
)css";

}  // namespace

std::string RenderRunHtml(const RunRecord& run) {
  const json start = run.start ? *run.start : json::object();
  const json end = run.end ? *run.end : json::object();
  std::string out;
  absl::StrAppend(
      &out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n",
      "<title>run ", HtmlEscape(run.run_id), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n");
  absl::StrAppend(&out, "<h1>Agent run ", HtmlEscape(run.run_id), "</h1>\n<table class=\"meta\">\n");
  auto meta = [&out](const char* name, const std::string& escaped_value) {
    absl::StrAppend(&out, "<tr><th>", name, "</th><td>", escaped_value, "</td></tr>\n");
  };
  meta("policy", Field(start, "policy", "(no run_start)"));
  meta("goal", Field(start, "goal"));
  meta("started", Field(start, "started_at"));
  if (start.contains("budgets")) {
    meta("budgets", absl::StrCat("max_steps ", Field(start["budgets"], "max_steps"),
                                 ", max_tool_calls ", Field(start["budgets"], "max_tool_calls")));
  }
  if (run.end) {
    const std::string stop = run.stop_reason();
    meta("stop reason",
         absl::StrCat("<span class=\"", stop == "done" ? "stop-done" : "stop-other", "\">",
                      HtmlEscape(stop), "</span> ", Field(end, "stop_detail")));
    meta("steps / tool calls",
         absl::StrCat(Field(end, "steps"), " / ", Field(end, "tool_calls")));
    meta("answer", Field(end, "answer", "(none)"));
    meta("ended", Field(end, "ended_at"));
  } else {
    meta("stop reason", "<span class=\"stop-other\">no run_end line: the run was cut short</span>");
  }
  absl::StrAppend(&out, "</table>\n");

  double slowest = 0;
  for (const StepRecord& s : run.steps) slowest = std::max(slowest, s.duration_ms);
  absl::StrAppend(&out,
                  "<div class=\"timeline\">\n<div class=\"head\"><span>step</span><span>tool</span>"
                  "<span>status</span><span>error</span><span>duration</span>"
                  "<span>budget left</span><span>args</span></div>\n");
  for (const StepRecord& s : run.steps) {
    const bool ok = s.ok();
    const double width = slowest > 0 ? std::max(1.0, 100.0 * s.duration_ms / slowest) : 1.0;
    const std::string args = s.args.dump(-1, ' ', false, json::error_handler_t::replace);
    absl::StrAppend(
        &out, "<details id=\"step-", s.step, "\" class=\"step\">\n<summary class=\"row\">",
        "<span>", s.step, "</span><span>", HtmlEscape(s.tool), "</span>",
        ok ? "<span class=\"ok\">ok</span>" : "<span class=\"fail\">failed</span>",
        "<span class=\"code\">", HtmlEscape(s.error_code()), "</span>",
        absl::StrFormat("<span><div class=\"bar%s\" style=\"width:%.1f%%\"></div>%.3f ms</span>",
                        ok ? "" : " failbar", width, s.duration_ms),
        "<span>steps ", s.steps_left, ", tools ", s.tools_left, "</span>",
        "<span class=\"args\">", HtmlEscape(Abbreviate(args, 120)),
        "</span></summary>\n<div class=\"body\">\n",
        "<h3>decision</h3><pre>", JsonBlock({{"tool", s.tool}, {"args", s.args}}), "</pre>\n",
        "<h3>result envelope</h3><pre>", JsonBlock(s.result), "</pre>\n",
        "<h3>state after the step</h3><pre>", JsonBlock(s.state), "</pre>\n</div>\n</details>\n");
  }
  absl::StrAppend(&out, "</div>\n<p class=\"note\">", run.steps.size(),
                  " steps. Click a step to see its decision, result envelope and state. Budget left "
                  "is what remained before the step.</p>\n</body>\n</html>\n");
  return out;
}

}  // namespace agent::observe

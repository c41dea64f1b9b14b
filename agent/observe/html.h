// `trace html`: a self-contained HTML page for one run.
//
// The page loads nothing: inline CSS, no script at all, no URL of any kind; a Content-Security-Policy
// of default-src 'none' (inline styles allowed) makes a browser refuse a load even if one slipped in.
// It shows the run header (run_id, policy, goal, budgets, stop reason) and a timeline: one row per
// step with its tool, status, duration (a bar scaled to the slowest step), budget left before the
// step and the error code where one occurred; each row is a <details> element that opens, without
// JavaScript, on the step's decision, result envelope and state snapshot.
//
// Everything from the trace is untrusted text (tool output, file contents, error messages) and is
// HTML-escaped; the JSON is dumped with invalid UTF-8 replaced by U+FFFD.
//
// Thread-safety: pure functions.
#ifndef AGENT_OBSERVE_HTML_H_
#define AGENT_OBSERVE_HTML_H_

#include <string>

#include "absl/strings/string_view.h"
#include "agent/observe/trace_reader.h"

namespace agent::observe {

// & < > " ' as character references.
std::string HtmlEscape(absl::string_view text);

// The page for `run`.
std::string RenderRunHtml(const RunRecord& run);

}  // namespace agent::observe

#endif  // AGENT_OBSERVE_HTML_H_

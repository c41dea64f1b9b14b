#include "agent/observe/html.h"

#include "agent/observe/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::observe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(HtmlTest, Escape) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(HtmlTest, TimelineOfTheRun) {
  std::string page = RenderRunHtml(LoadTestdata("escape.jsonl").runs[0]);
  EXPECT_THAT(page, HasSubstr("<!DOCTYPE html>"));
  EXPECT_EQ(Count(page, "<details"), 3);
  EXPECT_EQ(Count(page, "<summary"), 3);
  EXPECT_EQ(Count(page, "<span class=\"code\">EPERM</span>"), 3);
  EXPECT_THAT(page, HasSubstr("<span>steps 8, tools 8</span>"));
  EXPECT_THAT(page, HasSubstr("<span class=\"fail\">failed</span>"));
  EXPECT_THAT(page, HasSubstr("no_progress"));
  EXPECT_THAT(page, HasSubstr("<h3>result envelope</h3><pre>{\n  &quot;cost&quot;"));
  EXPECT_THAT(page, HasSubstr(" ms</span>"));
}

TEST(HtmlTest, LoadsNothingFromAnywhere) {
  for (const char* file : {"good.jsonl", "escape.jsonl", "xss.jsonl", "killed.jsonl"}) {
    std::string page = RenderRunHtml(LoadTestdata(file).runs[0]);
    for (const char* forbidden : {"http:", "https:", "//", "src=", "href=", "<link", "<script",
                                  "url(", "@import", "<iframe", "<img", "<object", "<embed"}) {
      // "//" may appear only inside the Content-Security-Policy-free text; there is none.
      EXPECT_THAT(page, Not(HasSubstr(forbidden))) << file << " contains " << forbidden;
    }
    EXPECT_THAT(page, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'"));
  }
}

TEST(HtmlTest, UntrustedTextIsEscaped) {
  std::string page = RenderRunHtml(LoadTestdata("xss.jsonl").runs[0]);
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt; &amp; "
                              "\\&quot;quotes\\&quot;"));
}

TEST(HtmlTest, MetaTableOfACompleteRun) {
  std::string page = RenderRunHtml(LoadTestdata("good.jsonl").runs[0]);
  EXPECT_THAT(page, HasSubstr("<h1>Agent run 0123456789abcdef0123456789abcdef</h1>\n"
                              "<table class=\"meta\">\n"
                              "<tr><th>policy</th><td>scripted:good</td></tr>\n"
                              "<tr><th>goal</th><td>fix add() in calc.sh so that `sh test.sh` "
                              "passes</td></tr>\n"
                              "<tr><th>started</th><td>2026-11-30T16:23:11.674Z</td></tr>\n"
                              "<tr><th>budgets</th><td>max_steps 8, max_tool_calls 8</td></tr>\n"
                              "<tr><th>stop reason</th><td><span class=\"stop-done\">done</span> "
                              "task.finish accepted</td></tr>\n"
                              "<tr><th>steps / tool calls</th><td>4 / 4</td></tr>\n"
                              "<tr><th>answer</th><td>fixed add() in calc.sh: &#39;echo $((a - b))"
                              "&#39; -&gt; &#39;echo $((a + b))&#39;; sh test.sh passes</td></tr>\n"
                              "<tr><th>ended</th><td>2026-11-30T16:23:11.677Z</td></tr>\n"
                              "</table>\n"));
  EXPECT_THAT(RenderRunHtml(LoadTestdata("escape.jsonl").runs[0]),
              HasSubstr("<span class=\"stop-other\">no_progress</span>"));
}

// A run built by hand: no run_start, a step of zero duration, arguments too long for the summary
// line and a null or numeric field where text is expected.
TEST(HtmlTest, FallbacksAndLongArguments) {
  RunRecord run;
  run.run_id = "r";
  StepRecord s;
  s.step = 1;
  s.tool = "fs.read";
  std::string path = "x";
  for (int i = 0; i < 60; ++i) path += "\xc3\xa9";  // Then 120 bytes of two-byte characters.
  s.args = {{"path", path}};
  s.result = {{"ok", true}};
  run.steps.push_back(s);
  s.step = 2;
  s.args = {{"path", std::string(109, 'y')}};  // Exactly 120 bytes as JSON: shown whole.
  run.steps.push_back(s);
  run.end = nlohmann::json{{"stop_reason", "done"}, {"answer", nullptr}, {"steps", 1}, {"tool_calls", 1}};
  std::string page = RenderRunHtml(run);
  EXPECT_THAT(page, HasSubstr("<tr><th>policy</th><td>(no run_start)</td></tr>\n"
                              "<tr><th>goal</th><td></td></tr>\n"));
  EXPECT_THAT(page, Not(HasSubstr("<th>budgets</th>")));
  EXPECT_THAT(page, HasSubstr("<tr><th>answer</th><td>(none)</td></tr>"));
  EXPECT_THAT(page, HasSubstr("<tr><th>steps / tool calls</th><td>1 / 1</td></tr>"));
  EXPECT_THAT(page, HasSubstr("style=\"width:1.0%\""));
  // {"path":"x is 10 bytes, then the characters: 117 bytes would end inside one, so 116 are kept.
  std::string kept = "{&quot;path&quot;:&quot;x";
  for (int i = 0; i < 53; ++i) kept += "\xc3\xa9";
  EXPECT_THAT(page, HasSubstr("<span class=\"args\">" + kept + "...</span>"));
  EXPECT_THAT(page, HasSubstr("<span class=\"args\">{&quot;path&quot;:&quot;" + std::string(109, 'y') +
                              "&quot;}</span>"));
}

TEST(HtmlTest, ARunWithoutRunEnd) {
  std::string page = RenderRunHtml(LoadTestdata("killed.jsonl").runs[0]);
  EXPECT_THAT(page, HasSubstr("no run_end line"));
  EXPECT_EQ(Count(page, "<details"), 2);
}

}  // namespace
}  // namespace agent::observe

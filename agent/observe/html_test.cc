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

TEST(HtmlTest, ARunWithoutRunEnd) {
  std::string page = RenderRunHtml(LoadTestdata("killed.jsonl").runs[0]);
  EXPECT_THAT(page, HasSubstr("no run_end line"));
  EXPECT_EQ(Count(page, "<details"), 2);
}

}  // namespace
}  // namespace agent::observe

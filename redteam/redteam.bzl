"""One cc_test per red-team group, each with the case-count check of count_main.cc as its main()."""

load("@rules_cc//cc:defs.bzl", "cc_test")
load("//platforms:copts.bzl", "TEST_COPTS")

def redteam_group_test(name, group, srcs, deps = [], tags = [], size = "small", **kwargs):
    """A group binary //redteam:<group>_test whose main() fails when the group lost a case.

    Args:
      name: must be "<group>_test" (case_counts_test finds the binary by that name).
      group: the group's name in redteam/case_counts.h.
      srcs: the cases.
      deps: what the cases exercise (public sandbox/agent targets) plus helpers.
      tags: e.g. "no-sandbox" where a case needs to escape Bazel's sandbox (say why in BUILD).
      size: the test size.
      **kwargs: passed to cc_test.
    """
    if name != group + "_test":
        fail("redteam_group_test %s: the name must be %s_test" % (name, group))
    cc_test(
        name = name,
        size = size,
        srcs = srcs + ["count_main.cc"],
        copts = TEST_COPTS,
        local_defines = ['REDTEAM_GROUP=\\"%s\\"' % group],
        tags = tags,
        deps = deps + [
            ":case_counts",
            "@gtest//:gtest",
        ],
        **kwargs
    )

"""Compiler options shared by every project target (one place, as tcmalloc's copts.bzl)."""

# Project code is C++20 and warning-clean. System headers come in through -isystem, so their
# warnings do not fail our build.
PROJECT_COPTS = [
    "-std=c++20",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]

# Tests use the same options; gtest's macros are warning-clean under them.
TEST_COPTS = PROJECT_COPTS

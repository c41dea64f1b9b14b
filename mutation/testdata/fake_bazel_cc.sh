#!/usr/bin/env bash
# A stand-in for `bazel` in schemata_test.sh that really compiles: `build` compiles the fixture's
# lib/lib.cc and lib/lib_test.cc with the system C++ compiler into $FAKE_BIN/lib/lib_test (with
# an empty runfiles tree), so the schemata engine runs a real binary whose switches are real.
# Compiler errors are printed as Bazel prints them (relative paths) and exit 1.
# Every call is appended to $FAKE_STATE/calls.
set -u
startup=()
while [[ $# -gt 0 && "$1" == --* ]]; do startup+=("$1"); shift; done
cmd="$1"
shift
echo "$cmd $*" >>"$FAKE_STATE/calls"
case "$cmd" in
  shutdown) exit 0 ;;
  info)
    echo "$FAKE_BIN"
    exit 0
    ;;
  query)
    # Like Bazel, query takes no build options.
    case "$*" in *--per_file_copt*) echo "ERROR: Unrecognized option: --per_file_copt" >&2; exit 2 ;; esac
    case "$*" in
      *--output=label_kind*) echo "cc_test rule //lib:lib_test" ;;
      *--output=build*)
        printf '# %s/lib/BUILD:1:8\ncc_test(\n  name = "lib_test",\n)\n' "$PWD"
        ;;
      *) echo "//lib:lib_test" ;;
    esac
    exit 0
    ;;
  cquery)
    # What the "configuration" compiles: lib/posix_only.cc is left out, as a select() would.
    printf '//lib:lib.cc (null)\n//lib:lib_test.cc (null)\n//lib:lib.h (null)\n'
    exit 0
    ;;
  build)
    mkdir -p "$FAKE_BIN/lib/lib_test.runfiles/fixture"
    echo "build $(sha256sum lib/lib.cc | cut -c1-12)" >>"$FAKE_STATE/builds"
    c++ -std=c++17 -Wall -Werror -I. lib/lib.cc lib/lib_test.cc -o "$FAKE_BIN/lib/lib_test" 2>&1
    exit $(( $? == 0 ? 0 : 1 ))
    ;;
  *)
    echo "fake bazel: unsupported command $cmd" >&2
    exit 2
    ;;
esac

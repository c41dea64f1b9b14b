#!/usr/bin/env bash
# Seed 13.5.2: `ulimit -n N` is the easiest limit to write backwards. Measured in real shells:
#   - bash and dash: `ulimit -n N` sets the soft AND the hard limit; zsh sets only the soft one
#     (zsh: see the note above the loop);
#   - `-S` sets only the soft limit, `-H` only the hard one, in every shell;
#   - the soft limit can never exceed the hard one (EINVAL), neither by raising soft nor by lowering
#     hard below soft;
#   - a lowered hard limit cannot be raised again without CAP_SYS_RESOURCE (EPERM): shown by dropping
#     to uid/gid 65534 with setpriv, since these tests usually run as root;
#   - root raises it again only if it really holds CAP_SYS_RESOURCE in the initial user namespace
#     (a container's "root" often does not): asserted against what /proc says about this process.
# Hence the runner keeps a high hard limit in the parent and lowers limits only in the child.
# The single-quoted scripts are run by another shell: their $ expand there, not here.
# shellcheck disable=SC2016
set -euo pipefail
# Under `bazel test` the script runs as ci/<target>, so find the library in the runfiles tree;
# run by hand (bash ci/shell/x_test.sh) it sits next to this file.
repo_root=${TEST_SRCDIR:+$TEST_SRCDIR/$TEST_WORKSPACE}
repo_root=${repo_root:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=ci/shell/testlib.sh
source "$repo_root/ci/shell/testlib.sh"
export LC_ALL=C

hard0=$(ulimit -Hn)
if [ "$hard0" != unlimited ] && [ "$hard0" -lt 1024 ]; then
  skip all "the hard open-files limit is $hard0 (< 1024); the cases below need room for 256/512/1024"
  exit 0
fi

# Runs SCRIPT in SHELL and prints "rc=<status> S=<soft> H=<hard> err=<EINVAL|EPERM|none|other:...>".
# SCRIPT's last ulimit decides rc; the limits are read after it.
probe() {
  local shell=$1 script=$2
  shift 2
  "$@" "$shell" -c "cd /; $script"'
rc=$?
echo "rc=$rc S=$(ulimit -Sn) H=$(ulimit -Hn)"' 2>"$errfile" | tr -d '\n'
  if grep -qi 'invalid argument' "$errfile"; then echo " err=EINVAL"
  elif grep -qi 'operation not permitted' "$errfile"; then echo " err=EPERM"
  elif grep -qiE "can't raise hard limits|exceeds hard limit" "$errfile"; then echo " err=REFUSED"
  elif [ -s "$errfile" ]; then echo " err=other:$(tr '\n' ' ' <"$errfile")"
  else echo " err=none"; fi
}
errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT

# Which privilege does this process hold? On Linux, CAP_SYS_RESOURCE is capability bit 24, and it
# only lets a process raise a hard limit when held in the initial user namespace (uid_map is the
# identity). Without /proc (macOS) the kernel's rule is simply that the superuser may raise it.
if [ -r /proc/self/status ] && [ -r /proc/self/uid_map ]; then
  cap_eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
  has_sys_resource=0
  if (( (16#$cap_eff >> 24) & 1 )); then has_sys_resource=1; fi
  init_userns=0
  if [ "$(awk '{ print $1, $2, $3 }' /proc/self/uid_map)" = "0 0 4294967295" ]; then init_userns=1; fi
  can_raise=$(( has_sys_resource && init_userns ))
  echo "info  uid=$(id -u) CapEff=$cap_eff CAP_SYS_RESOURCE=$has_sys_resource initial-user-ns=$init_userns hard-limit-at-start=$hard0"
else
  has_sys_resource=0
  can_raise=0
  if [ "$(id -u)" = 0 ]; then has_sys_resource=1; can_raise=1; fi
  echo "info  uid=$(id -u) no /proc: privileged means uid 0 here; hard-limit-at-start=$hard0"
fi

# How to run a shell without privilege: directly if we already lack CAP_SYS_RESOURCE and are not
# root, else drop to 65534 (nobody) with setpriv. Empty when that is impossible.
unpriv=()
if [ "$(id -u)" != 0 ] && [ "$has_sys_resource" = 0 ]; then
  unpriv=(env)
elif command -v setpriv >/dev/null &&
     setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
unpriv_reason="setpriv (util-linux) is missing or cannot switch to uid 65534 here"

# Privilege-independent expectations: rc is 0 on success, non-zero (1 in bash/zsh, 2 in dash) on
# failure; we compare "ok" / "failed" rather than the shell's own number.
outcome() { sed -E 's/^rc=0 /ok /; s/^rc=[0-9]+ /failed /'; }

# zsh is not installed on the machine this was written on; its expectations come from zsh's own
# source (Src/Builtins/rlimits.c, do_limit): `ulimit -n` sets the soft limit only (the seed measured
# the same on macOS), `-H` below the soft limit lowers the soft one with it, and for a non-root
# user zsh itself refuses to raise a hard limit or to set soft above hard, before any setrlimit
# ("can't raise hard limits", "value exceeds hard limit": err=REFUSED). As root zsh skips those
# checks, so its root cases are not asserted.
for sh in $(shells_present); do
  start='ulimit -Sn 1024; ulimit -Hn 1024;'
  if [ "$sh" = zsh ]; then
    expect zsh "ulimit -n 256 from S=1024 H=1024 sets the soft limit only" "ok S=256 H=1024 err=none" \
      "$(probe zsh "$start ulimit -n 256" | outcome)"
  else
    expect "$sh" "ulimit -n 256 from S=1024 H=1024 sets soft and hard together" "ok S=256 H=256 err=none" \
      "$(probe "$sh" "$start ulimit -n 256" | outcome)"
  fi
  expect "$sh" "ulimit -Sn 256 sets only the soft limit" "ok S=256 H=1024 err=none" \
    "$(probe "$sh" "$start ulimit -Sn 256" | outcome)"
  expect "$sh" "ulimit -Hn 512 (above soft 256) sets only the hard limit" "ok S=256 H=512 err=none" \
    "$(probe "$sh" "$start ulimit -Sn 256; ulimit -Hn 512" | outcome)"
  if [ "$sh" = zsh ]; then
    expect zsh "ulimit -Hn 256 with S=1024 lowers the soft limit too" "ok S=256 H=256 err=none" \
      "$(probe zsh "$start ulimit -Hn 256" | outcome)"
  else
    expect "$sh" "soft cannot exceed hard: ulimit -Sn 2048 under H=1024 fails" \
      "failed S=1024 H=1024 err=EINVAL" "$(probe "$sh" "$start ulimit -Sn 2048" | outcome)"
    expect "$sh" "hard cannot go below soft: ulimit -Hn 256 with S=1024 fails" \
      "failed S=1024 H=1024 err=EINVAL" "$(probe "$sh" "$start ulimit -Hn 256" | outcome)"
  fi

  if [ "${#unpriv[@]}" -gt 0 ]; then
    who="unprivileged (uid $("${unpriv[@]}" id -u))"
    want_err=EPERM
    if [ "$sh" = zsh ]; then
      want_err=REFUSED
      expect zsh "$who: soft cannot exceed hard: ulimit -Sn 2048 under H=1024 fails" \
        "failed S=1024 H=1024 err=REFUSED" \
        "$(probe zsh "$start ulimit -Sn 2048" "${unpriv[@]}" | outcome)"
    fi
    expect "$sh" "$who: lowered hard 512 cannot be raised to 1024" \
      "failed S=256 H=512 err=$want_err" \
      "$(probe "$sh" "ulimit -Sn 256; ulimit -Hn 512; ulimit -Hn 1024" "${unpriv[@]}" | outcome)"
  else
    skip "$sh" "unprivileged hard-limit raise: $unpriv_reason"
  fi

  if [ "$sh" = zsh ]; then
    skip zsh "root raising a hard limit: zsh skips its own checks for root; not asserted"
  elif [ "$can_raise" = 1 ]; then
    expect "$sh" "this process holds CAP_SYS_RESOURCE: a lowered hard 512 CAN be raised to 1024" \
      "ok S=256 H=1024 err=none" \
      "$(probe "$sh" "ulimit -Sn 256; ulimit -Hn 512; ulimit -Hn 1024" | outcome)"
  else
    expect "$sh" "uid $(id -u) lacking CAP_SYS_RESOURCE in the initial user ns: raising hard 512 to 1024 fails too" \
      "failed S=256 H=512 err=EPERM" \
      "$(probe "$sh" "ulimit -Sn 256; ulimit -Hn 512; ulimit -Hn 1024" | outcome)"
  fi
done
finish

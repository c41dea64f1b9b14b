#!/usr/bin/env bash
# The Linux-only checks (seed 13.4.4): cgroups, namespaces, Landlock, seccomp and openat2, run as
# commands on this machine. Each check first establishes what the kernel really offers (mounts,
# unshare(1), /proc, and //ci:kernel_probe, which uses each feature), then, where the sandbox CLI
# (//sandbox/cli:sandbox) is built and has what the check needs, compares the CLI's `doctor` with
# that and runs a command through the CLI to see the layer take effect. Every check prints what it
# verified or why it skipped; a CLI that claims a layer the kernel lacks, or a layer in force that
# has no effect, fails. On macOS the whole script is skipped, explicitly, with status 0.
#
#   bash ci/verify-linux.sh
# awk programs in single quotes: their $1 is awk's field, not a shell expansion.
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/.."

os=$(uname -s)
if [ "$os" != Linux ]; then
  echo "verify-linux: skipped: this is $os; cgroups, namespaces, Landlock, seccomp and openat2 are Linux kernel features (the portable path is tested by --config=portable)"
  exit 0
fi

verified=0
skipped=0
failed=0
say_ok() { echo "  verified: $*"; verified=$((verified + 1)); }
say_skip() { echo "  skipped: $*"; skipped=$((skipped + 1)); }
say_fail() { echo "  FAILED: $*"; failed=$((failed + 1)); }

work=$(mktemp -d "${TMPDIR:-/tmp}/verify-linux.XXXXXX")
cgroup_probe=""
cleanup() {
  if [ -n "$cgroup_probe" ]; then rmdir "$cgroup_probe" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck disable=SC2054  # the comma belongs to the flag value
bazel_quiet=(--noshow_progress --ui_event_filters=-info,-debug)
# build TARGET: builds quietly; Bazel's messages are shown only when the build fails.
build() {
  if ! bazel build "${bazel_quiet[@]}" "$1" >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    echo "verify-linux: cannot build $1" >&2
    exit 1
  fi
  echo "  built $1"
}
echo "== build"
build //ci:kernel_probe
bin=$(bazel info "${bazel_quiet[@]}" bazel-bin 2>/dev/null)
probe=$bin/ci/kernel_probe

# The sandbox CLI, when it is in this tree. What it can do is read from its --help, so each check
# below starts using the CLI the day the CLI grows the subcommand or flag it needs.
cli=""
cli_help=""
if bazel query "${bazel_quiet[@]}" //sandbox/cli:sandbox >/dev/null 2>&1; then
  build //sandbox/cli:sandbox
  cli=$bin/sandbox/cli/sandbox
  # absl's --help exits non-zero after printing; the text is what matters.
  cli_help=$("$cli" --help 2>&1 || true)
else
  echo "  //sandbox/cli:sandbox is not in this tree: the CLI parts of every check are skipped"
fi
cli_has() { [ -n "$cli" ] && grep -Eq -- "$1" <<<"$cli_help"; }

# doctor: the CLI's own account of each layer, normalised to "name<TAB>available<TAB>why" lines
# whatever the JSON's exact shape (a list of layers, {layers: [...]}, or an object keyed by name).
doctor_tsv=$work/doctor.tsv
# read_doctor: runs `sandbox doctor --json` and normalises it into $doctor_tsv; fails when the
# output is not JSON holding at least one layer.
read_doctor() {
  "$cli" doctor --json >"$work/doctor.json" 2>"$work/doctor.err" &&
    jq -r '
      def entries:
        if type == "array" then .[]
        elif type == "object" and has("layers") then .layers | entries
        elif type == "object" then to_entries[]
          | if (.value | type) == "object" then .value + {name: (.value.name // .key)}
            else {name: .key, available: .value} end
        else empty end;
      entries | select(type == "object")
      | [(.name // .layer // "?"),
         ((.available // .ok // .supported // .present // .in_force // false) | tostring),
         ((.why // .reason // .detail // .details // "") | tostring)]
      | @tsv' "$work/doctor.json" >"$doctor_tsv" 2>>"$work/doctor.err" &&
    [ -s "$doctor_tsv" ]
}
show_doctor() {
  echo "== doctor (sandbox doctor --json), normalised to name / available / why:"
  sed 's/^/  /' "$doctor_tsv"
}
if [ -z "$cli" ]; then
  doctor_state="CLI lacks doctor: //sandbox/cli:sandbox is not in this tree"
elif cli_has '(^|[^-[:alnum:]])doctor([^-[:alnum:]]|$)'; then
  # The CLI says it has doctor: output that is not a layer list is a failure.
  if read_doctor; then
    doctor_state=ok
    show_doctor
  else
    echo "== doctor"
    say_fail "the CLI lists a doctor subcommand but 'sandbox doctor --json' gave no layer list: $(head -c 400 "$work/doctor.json" "$work/doctor.err" 2>/dev/null | tr '\n' ' ')"
    doctor_state="doctor output unusable (see the failure above)"
  fi
elif read_doctor; then
  # absl's --help lists flags, not subcommands: a doctor may exist that --help does not name.
  doctor_state=ok
  show_doctor
else
  doctor_state="CLI lacks doctor (not in 'sandbox --help', and 'sandbox doctor --json' gave no layer list)"
fi

# doctor_says REGEX: sets doctor_avail ("true"/"false") and doctor_why from the first doctor entry
# whose name matches REGEX (case-insensitive); returns 1, with the reason in doctor_why, when doctor
# is unavailable or lists no such entry.
doctor_avail=""
doctor_why=""
doctor_says() {
  local line
  doctor_avail=""
  if [ "$doctor_state" != ok ]; then doctor_why=$doctor_state; return 1; fi
  line=$(awk -F'\t' -v re="$1" 'tolower($1) ~ re { print; exit }' "$doctor_tsv")
  if [ -z "$line" ]; then doctor_why="doctor lists no layer matching /$1/"; return 1; fi
  doctor_avail=$(cut -f2 <<<"$line")
  doctor_why=$(cut -f3 <<<"$line")
}

# compare_with_doctor LAYER REGEX KERNEL_HAS(0|1): doctor may report a layer unavailable that the
# kernel has (degrading is allowed and said), never available when the kernel lacks it. Returns 0
# only when the layer is both claimed and real, i.e. when its effect should be checked through
# the CLI.
compare_with_doctor() {
  local layer=$1 regex=$2 kernel_has=$3
  if ! doctor_says "$regex"; then
    say_skip "$layer via the CLI: $doctor_why"
    return 1
  fi
  if [ "$doctor_avail" = true ] && [ "$kernel_has" = 1 ]; then
    say_ok "$layer: doctor reports it available, and the kernel has it"
    return 0
  elif [ "$doctor_avail" = true ]; then
    say_fail "$layer: doctor reports it available, but the kernel check above found it missing"
  elif [ "$kernel_has" = 1 ]; then
    say_ok "$layer: doctor reports it unavailable although the kernel has it (a run degrades and says so): ${doctor_why:-no reason given}"
  else
    say_ok "$layer: doctor and the kernel agree it is unavailable: ${doctor_why:-no reason given}"
  fi
  return 1
}

# cli_run CMD...: runs CMD under the sandbox CLI (with a scratch workspace when the CLI takes one),
# printing the command's own output.
cli_args=()
if cli_has '--workspace'; then cli_args+=("--workspace=$work/ws"); fi
# The kernel layers are opt-in on the CLI (--isolate); ask for every one, so each check below sees
# the layers doctor reports available actually in force (a missing one degrades and is named).
if cli_has '--isolate'; then cli_args+=("--isolate=all"); fi
cli_run() {
  mkdir -p "$work/ws"
  "$cli" "${cli_args[@]}" -- "$@"
}

# Every CLI check below runs commands through the CLI: first make sure it can run one at all.
if [ -n "$cli" ]; then
  echo "== the CLI runs a command"
  status=0
  cli_run true >"$work/cli-true.out" 2>&1 || status=$?
  if [ "$status" -eq 0 ]; then
    say_ok "sandbox ${cli_args[*]} -- true exits 0"
  else
    say_fail "sandbox -- true exited $status: $(head -c 300 "$work/cli-true.out" | tr '\n' ' ')"
  fi
fi

echo "== cgroups"
cg_kernel=0
v1=$(awk '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; i++)
       if (o[i] ~ /^(cpu|cpuacct|cpuset|memory|pids|io|blkio|devices|freezer|perf_event|hugetlb|net_cls|net_prio|rdma|misc)$/) print o[i] }' /proc/self/mounts | sort -u | tr '\n' ' ')
v2_mount=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
v2_controllers=""
if [ -n "$v2_mount" ]; then v2_controllers=$(cat "$v2_mount/cgroup.controllers" 2>/dev/null || true); fi
echo "  cgroup v1 controllers mounted: ${v1:-none}"
echo "  cgroup v2: ${v2_mount:-not mounted}${v2_mount:+, controllers: ${v2_controllers:-none}}"
missing=""
where=""
for c in memory pids cpu; do
  if grep -qw "$c" <<<"$v2_controllers"; then where+=" $c(v2)"
  elif grep -qw "$c" <<<"$v1"; then where+=" $c(v1)"
  else missing+=" $c"; fi
done
if [ -z "$v1$v2_mount" ]; then
  say_skip "cgroups: neither v1 nor v2 is mounted"
elif [ -n "$missing" ]; then
  say_skip "cgroups: the controllers the sandbox limits with are missing:$missing"
else
  cg_kernel=1
  say_ok "cgroups: the controllers the sandbox limits with are mounted:$where"
  # Can this process make a child group where the runner would put a run? (v1 pids, else v2 root.)
  parent=""
  if grep -qw pids <<<"$v1"; then
    parent=$(awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ { print $2; exit }' /proc/self/mounts)
  elif [ -n "$v2_mount" ]; then parent=$v2_mount; fi
  if [ -n "$parent" ] && mkdir "$parent/verify-linux.$$" 2>"$work/mkdir.err"; then
    cgroup_probe="$parent/verify-linux.$$"
    if [ -w "$cgroup_probe/pids.max" ] && echo 8 >"$cgroup_probe/pids.max" &&
       [ "$(cat "$cgroup_probe/pids.max")" = 8 ]; then
      say_ok "cgroups: created $cgroup_probe and set pids.max = 8 in it"
    else
      say_ok "cgroups: created $cgroup_probe (no writable pids.max there)"
    fi
    rmdir "$cgroup_probe" && cgroup_probe=""
  else
    say_skip "cgroups: cannot create a child group under ${parent:-any hierarchy}: $(cat "$work/mkdir.err" 2>/dev/null)"
  fi
fi
compare_with_doctor cgroups 'cgroup' "$cg_kernel" || true

echo "== namespaces"
ns_kernel=0
userns_opts=()
if [ "$(id -u)" != 0 ]; then userns_opts=(--user --map-root-user); fi
if ! command -v unshare >/dev/null; then
  say_skip "namespaces: unshare(1) (util-linux) is not installed"
else
  if unshare --user --map-root-user true 2>"$work/unshare.err"; then
    say_ok "namespaces: unshare --user --map-root-user works (user namespaces enabled)"
  else
    say_skip "namespaces: user namespaces unavailable: $(cat "$work/unshare.err")"
  fi
  if ifaces=$(unshare "${userns_opts[@]}" --net awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev 2>"$work/unshare.err"); then
    if [ "$(echo "$ifaces" | tr '\n' ' ')" = "lo " ]; then
      ns_kernel=1
      say_ok "namespaces: in unshare --net the only interface is lo (outside: $(awk -F: 'NR > 2 { gsub(/ /, "", $1); printf "%s ", $1 }' /proc/net/dev))"
    else
      say_fail "namespaces: a new network namespace shows interfaces other than lo: $ifaces"
    fi
  else
    say_skip "namespaces: network namespaces unavailable: $(cat "$work/unshare.err")"
  fi
fi
if compare_with_doctor "network namespace" 'net' "$ns_kernel"; then
  if out=$(cli_run awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev 2>&1); then
    if [ "$(echo "$out" | tr '\n' ' ')" = "lo " ]; then
      say_ok "network namespace: a command run by the CLI sees only lo"
    else
      say_fail "network namespace: doctor says it is in force, but a command run by the CLI sees: $(tr "\n" " " <<<"$out")"
    fi
  else
    say_fail "network namespace: the CLI could not run awk: $(tr "\n" " " <<<"$out")"
  fi
fi

echo "== Landlock"
ll_kernel=0
status=0
"$probe" landlock >"$work/landlock.out" 2>&1 || status=$?
sed 's/^/  /' "$work/landlock.out"
case $status in
  0) ll_kernel=1; say_ok "Landlock: $(grep -m1 ABI "$work/landlock.out" | sed 's/^landlock: //'), a restricted child is refused outside its directory" ;;
  2) say_skip "Landlock: $(grep -m1 unsupported "$work/landlock.out" | sed 's/^landlock: unsupported: //')"
     if [ -r /sys/kernel/security/lsm ]; then echo "  active LSMs: $(cat /sys/kernel/security/lsm)"; fi ;;
  *) say_fail "Landlock: the kernel has it but it misbehaved (kernel_probe landlock exited $status)" ;;
esac
if compare_with_doctor Landlock 'landlock' "$ll_kernel"; then
  outside=$work/outside-landlock
  cli_run sh -c "echo x > '$outside'" >"$work/cli.out" 2>&1 || true
  if [ -e "$outside" ]; then
    say_fail "Landlock: doctor says it is in force, yet a command run by the CLI wrote $outside"
  else
    say_ok "Landlock: a command run by the CLI could not write $outside: $(head -c 200 "$work/cli.out" | tr '\n' ' ')"
  fi
fi

echo "== seccomp"
sc_kernel=0
if grep -q '^Seccomp:' /proc/self/status; then
  echo "  /proc/self/status: $(grep '^Seccomp:' /proc/self/status | tr -s '\t' ' ') (0: this process is not filtered)"
  if [ -r /proc/sys/kernel/seccomp/actions_avail ]; then
    echo "  filter actions: $(cat /proc/sys/kernel/seccomp/actions_avail)"
  fi
  status=0
  "$probe" seccomp >"$work/seccomp.out" 2>&1 || status=$?
  sed 's/^/  /' "$work/seccomp.out"
  case $status in
    0) sc_kernel=1; say_ok "seccomp: filter mode works (a filter's EPERM reached the filtered child)" ;;
    2) say_skip "seccomp: $(grep -m1 unsupported "$work/seccomp.out" | sed 's/^seccomp: unsupported: //')" ;;
    *) say_fail "seccomp: the kernel has it but it misbehaved (kernel_probe seccomp exited $status)" ;;
  esac
else
  say_skip "seccomp: /proc/self/status has no Seccomp field (kernel built without CONFIG_SECCOMP)"
fi
if compare_with_doctor seccomp 'seccomp' "$sc_kernel"; then
  if out=$(cli_run grep '^Seccomp:' /proc/self/status 2>&1) && grep -Eq '^Seccomp:[[:space:]]+2$' <<<"$out"; then
    say_ok "seccomp: a command run by the CLI is filtered ($(tr -s '\t' ' ' <<<"$out"))"
  else
    say_fail "seccomp: doctor says it is in force, but a command run by the CLI reports: $out"
  fi
fi

echo "== openat2"
oa_kernel=0
status=0
"$probe" openat2 >"$work/openat2.out" 2>&1 || status=$?
sed 's/^/  /' "$work/openat2.out"
case $status in
  0) oa_kernel=1; say_ok "openat2: RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS refuse what they must" ;;
  2) say_skip "openat2: $(grep -m1 unsupported "$work/openat2.out" | sed 's/^openat2: unsupported: //') (the workspace walks with openat(O_NOFOLLOW) instead)" ;;
  *) say_fail "openat2: the kernel has it but it misbehaved (kernel_probe openat2 exited $status)" ;;
esac
compare_with_doctor openat2 'openat2|resolve' "$oa_kernel" || true

echo "verify-linux: $verified verified, $skipped skipped, $failed failed"
[ "$failed" -eq 0 ]

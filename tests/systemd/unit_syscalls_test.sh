#!/usr/bin/env bash
# The agent's unit filters system calls for the agent and everything below it (bubblewrap,
# takosumi-confine, tofu, providers). This runs a real sandboxed plan and apply under strace and
# fails on any system call the unit's SystemCallFilter= would refuse, so the filter can neither
# break Runs nor be widened without this test saying which call needs it.
# usage: unit_syscalls_test.sh <source dir> <it_plan_apply binary>
set -euo pipefail
src=$1 plan_apply=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every name the unit allows, groups (@system-service…) expanded the way systemd expands them.
expand() {
  local item
  for item in "$@"; do
    case $item in
      @*) expand $(systemd-analyze syscall-filter "$item" | sed 1d | grep -v '^ *#' | tr -s ' \n' ' ') ;;
      *) echo "$item" ;;
    esac
  done
}
filters=$(sed -n 's/^SystemCallFilter=//p' "$src/systemd/takosumi-agent.service")
if printf '%s\n' "$filters" | grep -q '^~'; then
  echo "FAIL: this test reads allow lists only; teach it deny lists (~…) first"; exit 1
fi
expand $filters | sort -u > "$work/allowed"

# Under ASan, LeakSanitizer stops the world with ptrace, which strace already holds: leaks are
# checked by the same test run without strace.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  strace -f -qq -o "$work/trace" "$plan_apply" \
  --gtest_filter='PlanApplyTest.ApplyAppendsStateVersionsAndPublishesOnlyMappedNonSensitiveOutputs' \
  > "$work/test.log" 2>&1 || { echo "FAIL: the plan/apply test failed under strace:"; cat "$work/test.log"; exit 1; }
sed -E 's/^[0-9]+ +//' "$work/trace" | grep -oE '^[a-z_0-9]+\(' | tr -d '(' | sort -u > "$work/used"
[ "$(wc -l < "$work/used")" -gt 50 ] || { echo "FAIL: strace saw almost nothing"; exit 1; }
# The landlock, seccomp and mount calls must be among them: the Run really was sandboxed.
for needed in landlock_restrict_self seccomp pivot_root; do
  grep -qx "$needed" "$work/used" || { echo "FAIL: no $needed: the Run was not sandboxed"; exit 1; }
done
refused=$(comm -23 "$work/used" "$work/allowed")
if [ -n "$refused" ]; then
  echo "FAIL: a sandboxed Run makes system calls takosumi-agent.service refuses:"
  echo "$refused"
  exit 1
fi
echo "ok: $(wc -l < "$work/used") distinct system calls, all allowed by the unit"

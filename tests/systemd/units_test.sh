#!/usr/bin/env bash
# The shipped systemd units: `systemd-analyze verify` finds nothing to say about them (an unknown or
# misspelt setting is only a warning there, so any output fails), and their exposure under
# `systemd-analyze security --offline=yes` stays at or below what docs/operations.md promises:
# takosumi-agent.service ≤ 4.0, takosumi-control.service ≤ 2.0.
# usage: units_test.sh <source dir> <takosumi-agent binary> <takosumi-control binary>
set -euo pipefail
src=$1 agent=$2 control=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# verify checks that ExecStart= programs exist: point them at this build's binaries.
sed "s|/usr/bin/takosumi-agent|$agent|g" "$src/systemd/takosumi-agent.service" \
  > "$work/takosumi-agent.service"
sed "s|/usr/bin/takosumi-control|$control|g" "$src/systemd/takosumi-control.service" \
  > "$work/takosumi-control.service"

for unit in takosumi-agent takosumi-control; do
  out=$(cd "$work" && systemd-analyze verify "./$unit.service" 2>&1) || {
    echo "FAIL: systemd-analyze verify $unit.service exited non-zero:"; echo "$out"; failed=1; }
  if [ -n "$out" ]; then
    echo "FAIL: systemd-analyze verify $unit.service is not silent:"; echo "$out"; failed=1
  fi
done

check_exposure() {
  local unit=$1 limit=$2 report score
  report=$(systemd-analyze security --offline=yes "$work/$unit.service" 2>&1)
  score=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
  if [ -z "$score" ]; then
    echo "FAIL: no exposure level for $unit.service:"; echo "$report"; failed=1; return
  fi
  if awk -v s="$score" -v l="$limit" 'BEGIN { exit !(s <= l) }'; then
    echo "ok: $unit.service exposure $score (limit $limit)"
  else
    echo "FAIL: $unit.service exposure $score is above $limit:"
    printf '%s\n' "$report" | grep '✗'
    failed=1
  fi
}
check_exposure takosumi-agent 4.0
check_exposure takosumi-control 2.0

# Type=notify with a watchdog, as the daemons speak sd_notify (service/service_notifier.hpp).
for unit in takosumi-agent takosumi-control; do
  for setting in Type=notify NotifyAccess=main WatchdogSec=; do
    grep -q "^$setting" "$src/systemd/$unit.service" ||
      { echo "FAIL: $unit.service lacks $setting"; failed=1; }
  done
done
# Settings that break every Run's sandbox (docs/operations.md "The systemd units' hardening"):
# bubblewrap needs its namespaces and a /proc it can mount (nothing may cover parts of /proc).
for setting in RestrictNamespaces PrivateUsers ProtectKernelTunables ProtectKernelLogs ProtectProc \
               ProcSubset MemoryDenyWriteExecute; do
  if grep -Eq "^$setting=" "$src/systemd/takosumi-agent.service"; then
    echo "FAIL: takosumi-agent.service sets $setting=, which keeps bubblewrap or Runs from working"
    failed=1
  fi
done
exit $failed

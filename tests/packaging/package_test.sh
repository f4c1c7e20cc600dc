#!/usr/bin/env bash
# The Debian packages, from this build: lintian reports no error; dpkg installs both into a fresh
# root (maintainer scripts run with DPKG_ROOT: the users and directories are made there); the
# files land where Debian and the units expect them; and the installed takosumi-agent passes
# --check-config on the installed example configuration, run in a mount namespace where the
# fresh root's /etc/takosumi is /etc/takosumi.
# usage: package_test.sh <build dir> <tofu> <provider mirror> <takosumi-control>
set -euo pipefail
build=$1 tofu=$2 mirror=$3 control=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/dist" > "$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack"; }
debs=("$work"/dist/takosumi-agent_*.deb "$work"/dist/takosumi-control_*.deb)
[ -f "${debs[0]}" ] && [ -f "${debs[1]}" ] || fail "cpack made: $(ls "$work/dist")"

lintian --fail-on error "${debs[@]}" > "$work/lintian.log" 2>&1 ||
  { cat "$work/lintian.log"; fail "lintian reports errors"; }
grep '^E:' "$work/lintian.log" && fail "lintian errors"
echo "ok: lintian reports no error"

root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status"
# The fresh root has no libc or bubblewrap: their dependencies are the host's, not checked here.
dpkg --root="$root" --force-script-chrootless --force-depends --log=/dev/null -i "${debs[@]}" \
  > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i"; }
for f in usr/bin/takosumi-agent usr/bin/takosumi-supervise usr/bin/takosumi-confine \
         usr/bin/takosumi-control usr/bin/takosumi lib/systemd/system/takosumi-agent.service \
         lib/systemd/system/takosumi-control.service etc/takosumi/agent.yaml \
         etc/takosumi/control.yaml usr/share/doc/takosumi-agent/copyright \
         usr/lib/sysusers.d/takosumi-agent.conf usr/lib/tmpfiles.d/takosumi-agent.conf; do
  [ -e "$root/$f" ] || fail "not installed: /$f"
done
grep -q '^takosumi:' "$root/etc/passwd" || fail "no takosumi user"
grep -q '^takosumi-control:' "$root/etc/passwd" || fail "no takosumi-control user"
uid=$(awk -F: '$1 == "takosumi" { print $3 }' "$root/etc/passwd")
[ "$(stat -c '%u %a' "$root/var/lib/takosumi-agent")" = "$uid 700" ] ||
  fail "/var/lib/takosumi-agent is $(stat -c '%u %a' "$root/var/lib/takosumi-agent")"
gid=$(awk -F: '$1 == "takosumi" { print $3 }' "$root/etc/group")
[ "$(stat -c '%g %a' "$root/etc/takosumi/agent.yaml")" = "$gid 640" ] ||
  fail "agent.yaml is $(stat -c '%g %a' "$root/etc/takosumi/agent.yaml")"
dpkg --root="$root" --status takosumi-agent | grep -q '/etc/takosumi/agent.yaml' ||
  fail "agent.yaml is not a conffile"
echo "ok: installed into a fresh root with its user, directories and conffiles"

# What the operator adds after installing (README "Install on a worker host").
"$control" init-keys --data-dir "$work/control" > /dev/null
cp "$work/control/keys/signing.pub" "$root/etc/takosumi/control-signing.pub"
echo "pool-token-for-the-package-test" > "$root/etc/takosumi/pool-token"
chmod 0600 "$root/etc/takosumi/pool-token"
mkdir -p "$work/var/lib/takosumi-agent"
# A root made of the host's /usr and /etc (read-only) with the fresh root's /etc/takosumi, the
# built tofu at the example's path and the test mirror as its provider mirror. Every mount point
# is made on a tmpfs of the namespace: nothing is created on the host. The host's /proc, not a
# fresh one: bubblewrap covers parts of a /proc it mounts, and the kernel would then refuse the
# /proc of the agent's own sandbox check (as under the unit settings docs/operations.md names).
view=(--ro-bind /usr /usr --tmpfs /usr/local --ro-bind "$tofu" /usr/local/bin/tofu
      --bind /proc /proc --dev /dev --tmpfs /tmp --tmpfs /run --tmpfs /var --tmpfs /etc)
for top in /bin /sbin /lib /lib32 /lib64 /libx32; do
  if [ -L "$top" ]; then view+=(--symlink "$(readlink "$top")" "$top")
  elif [ -d "$top" ]; then view+=(--ro-bind "$top" "$top"); fi
done
for entry in /etc/*; do
  [ "$entry" = /etc/takosumi ] || view+=(--ro-bind "$entry" "$entry")
done
view+=(--ro-bind "$root/etc/takosumi" /etc/takosumi
       --bind "$work/var/lib/takosumi-agent" /var/lib/takosumi-agent
       --ro-bind "$mirror" /var/lib/takosumi-agent/providers
       --ro-bind "$root/usr/bin" /opt/takosumi/bin)
out=$(bwrap "${view[@]}" -- /opt/takosumi/bin/takosumi-agent --config /etc/takosumi/agent.yaml \
        --check-config 2>&1) ||
  { echo "$out"; fail "takosumi-agent --check-config on the installed example"; }
echo "$out" | grep -q "configuration ok: agent worker-1" || { echo "$out"; fail "unexpected output"; }
echo "$out"
echo "ok: the installed takosumi-agent accepts the installed example configuration"

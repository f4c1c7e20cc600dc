#!/usr/bin/env bash
# The daemons' commands on CLI11 (docs/operations.md): every command and subcommand answers --help
# on stdout with exit 0 and nothing on stderr; a wrong command line is exit 2 with the reason on
# stderr and nothing on stdout; a command that is not a program's own is refused the same way.
# usage: help_test.sh <takosumi-agent binary> <takosumi-control binary>
set -uo pipefail
agent=$1 control=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

help_ok() { # <program> <args...>
  local rc
  "$@" --help >"$work/out" 2>"$work/err"; rc=$?
  if [ "$rc" -ne 0 ]; then echo "FAIL: $* --help exited $rc"; cat "$work/err"; failed=1; return; fi
  if [ -s "$work/err" ]; then echo "FAIL: $* --help wrote to stderr:"; cat "$work/err"; failed=1; fi
  if ! grep -q "Usage" "$work/out"; then echo "FAIL: $* --help printed no usage:"; cat "$work/out"; failed=1; fi
}

refused() { # <words the reason must hold> <program> <args...>
  local want=$1 rc; shift
  "$@" >"$work/out" 2>"$work/err"; rc=$?
  if [ "$rc" -ne 2 ]; then echo "FAIL: $* exited $rc, not 2"; cat "$work/out" "$work/err"; failed=1; return; fi
  if [ -s "$work/out" ]; then echo "FAIL: $* wrote to stdout:"; cat "$work/out"; failed=1; fi
  if ! grep -qi -- "$want" "$work/err"; then
    echo "FAIL: $*: the reason does not say '$want':"; cat "$work/err"; failed=1
  fi
}

for words in "" "recover" "keys" "keys export" "run-bundle" "run-bundle execute" "mirror" \
             "mirror verify" "mirror add"; do
  # shellcheck disable=SC2086  # the words are the command
  help_ok "$agent" $words
done
for words in "" "serve" "check-config" "migrate" "init-keys" "rotate-keys" "restore" "migrate-store"; do
  # shellcheck disable=SC2086
  help_ok "$control" $words
done

refused "--bogus" "$agent" --bogus
refused "--config" "$agent" --once
refused "--out" "$agent" --config /nonexistent/agent.yaml run-bundle execute bundle.tar
refused "subcommand" "$agent" --config /nonexistent/agent.yaml run-bundle
refused "--pins" "$agent" mirror verify /nonexistent
refused "command of its own" "$agent" --config /nonexistent/agent.yaml --once recover
refused "excludes" "$agent" --config /nonexistent/agent.yaml --once --check-config
refused "excludes" "$agent" --config /nonexistent/agent.yaml recover --push --discard r1
# The last --config counts, as a wrapper that appends one expects.
refused "/nonexistent/second.yaml" "$agent" --config /nonexistent/first.yaml \
  --config /nonexistent/second.yaml --check-config
refused "subcommand" "$control"
refused "--config" "$control" serve
refused "--key" "$control" rotate-keys --config /nonexistent/control.yaml
refused "storage" "$control" rotate-keys --config /nonexistent/control.yaml --key everything
refused "subcommand" "$control" --config /nonexistent/control.yaml

# --version is the one line a package's postinst or an operator reads.
"$agent" --version | grep -q '^takosumi-agent [0-9]' || { echo "FAIL: takosumi-agent --version"; failed=1; }
"$control" --version | grep -q '^takosumi-control [0-9]' || { echo "FAIL: takosumi-control --version"; failed=1; }

exit $failed

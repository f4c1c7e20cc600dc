#!/usr/bin/env bash
# A real PostgreSQL server for the tests (never a mock): a throwaway cluster in a temp directory,
# reachable only through a Unix socket there, run as an unprivileged user because PostgreSQL
# refuses to run as root (the Debian package's `postgres` when we are root, else ourselves).
#
#   usage: test_server.sh start <state-dir> | stop <state-dir>
#   start writes <state-dir>/socket_dir (the socket's directory: libpq's host) and
#   <state-dir>/user; tests create a database of their own in it. stop removes the cluster.
set -euo pipefail
command=${1:?usage: test_server.sh start|stop <state-dir>}
state=${2:?usage: test_server.sh start|stop <state-dir>}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -x "$bin/pg_ctl" ] || { echo "PostgreSQL server binaries not found: run scripts/setup" >&2; exit 1; }

as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "no postgres user: install postgresql (scripts/setup)" >&2; exit 1; }
  as_owner=(runuser -u postgres --)
fi

stop() {
  [ -f "$state/cluster" ] || return 0
  local cluster; cluster=$(cat "$state/cluster")
  "${as_owner[@]}" "$bin/pg_ctl" -D "$cluster/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$cluster" "$state/cluster" "$state/socket_dir" "$state/user"
}

case "$command" in
  start)
    mkdir -p "$state"
    stop  # a cluster left by an interrupted run
    cluster=$(mktemp -d /tmp/takosumi-test-pg.XXXXXX)
    chmod 0700 "$cluster"
    [ ${#as_owner[@]} -eq 0 ] || chown postgres: "$cluster"
    echo "$cluster" > "$state/cluster"
    "${as_owner[@]}" "$bin/initdb" -D "$cluster/data" -U takosumi --auth=trust -E UTF8 \
      --no-locale --no-sync >"$cluster/initdb.log" 2>&1 || { cat "$cluster/initdb.log" >&2; exit 1; }
    # Durability is not under test here and costs minutes of fsync on a CI disk; the WAL is kept
    # small (wal_level=minimal, a 64 MB ceiling) because CI's disk also holds two builds.
    "${as_owner[@]}" "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w -t 60 start \
      -o "-c listen_addresses='' -c unix_socket_directories='$cluster' \
          -c unix_socket_permissions=0700 -c fsync=off -c synchronous_commit=off \
          -c full_page_writes=off -c wal_level=minimal -c max_wal_senders=0 \
          -c max_wal_size=64MB -c min_wal_size=32MB -c max_connections=300" >/dev/null \
      || { cat "$cluster/server.log" >&2; exit 1; }
    echo "$cluster" > "$state/socket_dir"
    echo takosumi > "$state/user"
    echo "postgresql test server on $cluster"
    ;;
  stop) stop ;;
  *) echo "usage: test_server.sh start|stop <state-dir>" >&2; exit 2 ;;
esac

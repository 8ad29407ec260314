#!/usr/bin/env bash
# pg-test.sh starts and stops a throwaway PostgreSQL cluster for vouch's
# database tests (package pgstore).
#
#   scripts/pg-test.sh start    install PostgreSQL if missing, create and start
#                               a cluster, print the export line
#   scripts/pg-test.sh env      print the export line of the running cluster
#   scripts/pg-test.sh status   say whether the cluster runs
#   scripts/pg-test.sh stop     stop the cluster and delete its files
#
# Typical use:
#
#   eval "$(scripts/pg-test.sh start)"
#   go test -race ./pgstore/...
#   scripts/pg-test.sh stop
#
# The cluster lives in a temporary directory, listens on 127.0.0.1 only (and
# on a Unix socket in that directory), trusts local connections and holds
# one database, vouch_test. Run as root, the script installs Debian's
# postgresql package when no server is found and runs the server as the
# postgres user, since PostgreSQL refuses to run as root; run as any other
# user, it runs the server as that user and needs PostgreSQL installed.
#
# Environment: VOUCH_PG_PORT (default 55432), VOUCH_PG_DIR (default
# ${TMPDIR:-/tmp}/vouch-pg-$VOUCH_PG_PORT). Only the export line goes to
# standard output; progress goes to standard error.
set -euo pipefail

port=${VOUCH_PG_PORT:-55432}
dir=${VOUCH_PG_DIR:-${TMPDIR:-/tmp}/vouch-pg-$port}
db=vouch_test
url="postgres://postgres@127.0.0.1:$port/$db?sslmode=disable"

log() { echo "pg-test: $*" >&2; }
die() { log "$*"; exit 1; }

# bindir prints the directory of the newest installed server's programs:
# a version's directory without initdb (a client alone) is passed over.
bindir() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
		if [ -x "$d/initdb" ]; then
			echo "$d"
			return
		fi
	done
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
	fi
}

install_server() {
	[ "$(id -u)" = 0 ] || die "PostgreSQL is not installed; install the postgresql package (or run as root to let this script do it)"
	command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and apt-get is missing"
	log "installing Debian's postgresql package"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq postgresql >&2
}

# as_owner runs a command as the cluster's owner.
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

running() {
	[ -f "$dir/data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

start() {
	bin=$(bindir)
	if [ -z "$bin" ]; then
		install_server
		bin=$(bindir)
		[ -n "$bin" ] || die "no initdb found after installing postgresql"
	fi
	if running; then
		log "already running in $dir"
		echo "export VOUCH_TEST_DATABASE_URL='$url'"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || useradd --system --home-dir "$dir" --shell /bin/sh postgres
		chown postgres: "$dir"
	fi
	log "initdb in $dir/data"
	as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; die "initdb failed"; }
	log "starting on 127.0.0.1:$port"
	as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir" start >&2 ||
		{ cat "$dir/server.log" >&2; die "the server did not start"; }
	as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
	echo "export VOUCH_TEST_DATABASE_URL='$url'"
}

stop() {
	bin=$(bindir)
	if [ -n "$bin" ] && running; then
		as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2
	fi
	rm -rf "$dir"
	log "stopped; removed $dir"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
env)
	bin=$(bindir)
	[ -n "$bin" ] && running || die "not running; use: $0 start"
	echo "export VOUCH_TEST_DATABASE_URL='$url'"
	;;
status)
	bin=$(bindir)
	if [ -n "$bin" ] && running; then log "running in $dir on 127.0.0.1:$port"; else log "not running"; exit 1; fi
	;;
*) die "usage: $0 start|stop|env|status" ;;
esac

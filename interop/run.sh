#!/usr/bin/env bash
# The interop suite: builds examples/server, starts it twice on loopback
# (plain, and with -mcp-paid), and runs every checks/*.mjs and checks/*.py
# against it with the official clients of MCP, x402 and A2A, the JavaScript
# ones pinned in package-lock.json, the Python ones in requirements.txt, and
# checks/*.java with the MCP and A2A Java SDKs, pinned in java/.
# Prints "ok NAME" or "FAIL NAME: why" per check and exits non-zero on any
# failure. See README.md.
#
#   interop/run.sh            every check
#   interop/run.sh mcp-http   only the named checks (file names without .mjs, .py or .java)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
check_timeout=${VOUCH_CHECK_TIMEOUT:-180}

apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	if [ -z "${apt_updated:-}" ]; then
		apt-get update -qq
		apt_updated=1
	fi
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Node and npm, and promtool for the metrics check, from Debian when missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "interop: installing Debian's nodejs and npm"
	apt_install nodejs npm
fi
if ! command -v promtool >/dev/null 2>&1; then
	echo "interop: installing Debian's prometheus (for promtool)"
	apt_install prometheus
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vouch-interop.XXXXXX")
pids=()
stop_servers() {
	local pid
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	pids=()
}
cleanup() {
	stop_servers
	if [ -n "${VOUCH_INTEROP_KEEP:-}" ]; then
		echo "interop: files kept in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "interop: npm ci"
if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >"$work/npm-ci.log" 2>&1); then
	cat "$work/npm-ci.log"
	echo "FAIL npm ci"
	exit 1
fi

# The checks to run, in the order of their names.
checks=()
for file in "$here"/checks/*; do
	case $file in
	*.mjs | *.py | *.java) ;;
	*) continue ;;
	esac
	name=$(basename "${file%.*}")
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	checks+=("$file")
done

# setup SCRIPT ARG... runs SCRIPT and prints what it prints: the Python
# checks' python (python-setup.sh), the class path of a set of the Java
# checks' libraries (java-setup.sh SET).
setup() {
	local script=$1 started=$SECONDS log="$work/$1.log"
	shift
	echo "interop: $script $*" >&2
	if ! "$here/$script" "$@" 2>"$log"; then
		cat "$log" >&2
		echo "FAIL $script $*" >&2
		return 1
	fi
	echo "interop: $script $* done ($((SECONDS - started))s)" >&2
}

# libraries NAME... prints, once each, the sets of libraries the Java
# checks among NAME... name in a line "// libraries: java/SET" (by default
# java/current).
libraries() {
	local file
	for file in "$@"; do
		if [[ $file == *.java ]]; then
			sed -n 's|^// libraries: ||p' "$file" | grep . || echo java/current
		fi
	done | sort -u
}

python=
for file in "${checks[@]}"; do
	if [[ $file == *.py ]]; then
		python=$(setup python-setup.sh)
		break
	fi
done
declare -A java_cp=()
for set in $(libraries "${checks[@]}"); do
	java_cp[$set]=$(setup java-setup.sh "$set")
done

echo "interop: go build ./examples/..."
mkdir -p "$work/bin"
(cd "$repo" && go build -o "$work/bin/" ./examples/...)

api_key="interop-$RANDOM$RANDOM"

# start_server NAME FLAGS... starts examples/server on free loopback ports
# and waits for its banner; it sets <NAME>_base, <NAME>_metrics,
# <NAME>_debug and issuer.
start_server() {
	local name=$1
	shift
	local banner="$work/$name.banner" log="$work/$name.log"
	"$work/bin/server" -addr 127.0.0.1:0 -metrics-addr 127.0.0.1:0 -debug-addr 127.0.0.1:0 \
		-api-key "$api_key" -signing-key "$work/signing-key.json" -trusted-keys "$work/trusted-keys.json" \
		"$@" >"$banner" 2>"$log" &
	local pid=$!
	pids+=("$pid")
	local i
	for i in $(seq 300); do
		# The banner is written at once, when every listener is open.
		if grep -q '^  metrics alone: ' "$banner" 2>/dev/null; then
			break
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$log"
			echo "FAIL server $name: exited before it listened"
			exit 1
		fi
		sleep 0.1
	done
	if ! grep -q '^  metrics alone: ' "$banner"; then
		cat "$log"
		echo "FAIL server $name: no banner within 30s"
		exit 1
	fi
	local base metrics debug
	base=$(sed -n 's/^vouch demo server listening on \(http:[^ ]*\)$/\1/p' "$banner")
	metrics=$(sed -n 's#^  metrics alone: http://\([^/]*\)/metrics.*#\1#p' "$banner")
	debug=$(sed -n 's#^  debug vars: http://\([^/]*\)/debug/vars$#\1#p' "$banner")
	issuer=$(sed -n 's/^  receipts signed by \([^ ]*\) .*/\1/p' "$banner")
	printf -v "${name}_base" '%s' "$base"
	printf -v "${name}_metrics" '%s' "$metrics"
	printf -v "${name}_debug" '%s' "$debug"
	echo "interop: server $name at $base (metrics $metrics, debug $debug)"
}

start_server plain
start_server paid -mcp-paid

export VOUCH_REPO="$repo"
export VOUCH_BIN_DIR="$work/bin"
export VOUCH_SERVER_BIN="$work/bin/server"
export VOUCH_API_KEY="$api_key"
export VOUCH_BASE_URL="$plain_base"
export VOUCH_METRICS_ADDR="$plain_metrics"
export VOUCH_DEBUG_ADDR="$plain_debug"
export VOUCH_PAID_BASE_URL="$paid_base"
export VOUCH_PAID_METRICS_ADDR="$paid_metrics"
export VOUCH_PAID_DEBUG_ADDR="$paid_debug"
export VOUCH_SIGNING_KEY="$work/signing-key.json"
export VOUCH_TRUSTED_KEYS="$work/trusted-keys.json"
export VOUCH_ISSUER="$issuer"
VOUCH_PROMTOOL=$(command -v promtool)
export VOUCH_PROMTOOL

passed=0
failed=0
failures=()
took=()
for file in "${checks[@]}"; do
	name=$(basename "${file%.*}")
	dir="$work/checks/$name"
	mkdir -p "$dir"
	case $file in
	*.py) runner=("$python" -B "$here/lib/runcheck.py" "$file") ;;
	# A Java check is a class Main, compiled with lib/Check.java and the
	# other classes of lib/ it names, on the class path of the set of
	# libraries it names; lib/Check.java runs it.
	*.java)
		cp=${java_cp[$(libraries "$file")]}
		sources=("$here/lib/Check.java" "$file")
		for f in "$here"/lib/*.java; do
			class=$(basename "$f" .java)
			if [ "$class" != Check ] && grep -qw "$class" "$file"; then
				sources+=("$f")
			fi
		done
		runner=(java -cp "$dir/classes:$cp" Check Main)
		;;
	*) runner=(node "$here/lib/runcheck.mjs" "$file") ;;
	esac
	status=0
	started=$SECONDS
	if [[ $file == *.java ]] && ! javac -nowarn -d "$dir/classes" -cp "$cp" "${sources[@]}" >"$dir/output.txt" 2>&1; then
		echo "why: javac failed" >>"$dir/output.txt"
		status=1
	else
		(cd "$dir" && VOUCH_CHECK_DIR="$dir" timeout "$check_timeout" "${runner[@]}") \
			>>"$dir/output.txt" 2>&1 || status=$?
	fi
	took+=("$name $((SECONDS - started))s")
	if [ "$status" -eq 0 ]; then
		echo "ok $name"
		passed=$((passed + 1))
		continue
	fi
	why=$(sed -n 's/^why: //p' "$dir/output.txt" | tail -n 1)
	if [ "$status" -eq 124 ]; then
		why="did not finish within ${check_timeout}s"
	elif [ -z "$why" ]; then
		why="exit status $status: $(tail -n 1 "$dir/output.txt")"
	fi
	echo "FAIL $name: $why"
	failed=$((failed + 1))
	failures+=("$name")
done

stop_servers
for name in "${failures[@]}"; do
	echo "-- output of $name"
	sed 's/^/   /' "$work/checks/$name/output.txt" | tail -n 40
done
if [ "$failed" -gt 0 ]; then
	for name in plain paid; do
		echo "-- log of server $name (last lines)"
		tail -n 20 "$work/$name.log" | sed 's/^/   /'
	done
fi
echo "interop: time per check: $(IFS=,; echo "${took[*]}" | sed 's/,/, /g')"
echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

#!/usr/bin/env bash
# Makes the virtual environment of the Python checks (checks/*.py): the
# wheels pinned in requirements.txt, by version and sha256, in
# ${XDG_CACHE_HOME:-$HOME/.cache}/vouch-interop/venv, outside the tree. A
# second run finds it there, made from the same requirements.txt by the same
# python3, and takes well under a second; otherwise it is made anew.
#
# Prints the path of the environment's python on standard output; progress
# goes to standard error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vouch-interop
venv=$cache/venv
log() { echo "interop: $*" >&2; }

# python3 and its venv module (with ensurepip, which Debian ships apart as
# python3-venv), from Debian when missing.
missing=()
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian's ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The environment is kept while requirements.txt and the interpreter that
# made it are the same.
stamp=$(
	python3 -c 'import sys; print("python", sys.version.replace("\n", " "))'
	cat "$here/requirements.txt"
)
if [ -f "$venv/.done" ] && [ "$(cat "$venv/.done")" = "$stamp" ] && [ -x "$venv/bin/python" ]; then
	echo "$venv/bin/python"
	exit 0
fi

log "making the Python checks' virtual environment in $venv"
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/venv.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp"
if ! "$tmp/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
	--no-deps --only-binary=:all: --require-hashes -r "$here/requirements.txt" >&2; then
	log "pip install failed: requirements.txt pins the wheels of CPython 3.11 on linux x86_64, and python3 is $(python3 --version 2>&1)"
	exit 1
fi
"$tmp/bin/python" -m pip check --disable-pip-version-check >&2
echo "$stamp" >"$tmp/.done"
rm -rf "$venv"
# The environment's own paths follow its directory: bin/python finds
# pyvenv.cfg beside it.
mv "$tmp" "$venv"
trap - EXIT
echo "$venv/bin/python"

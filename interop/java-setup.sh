#!/usr/bin/env bash
# Fetches the libraries of the Java checks (checks/*.java): the artifacts
# java/pom.xml resolves to, with Maven, each checked against its sha256 in
# java/jars.sha256, into ${XDG_CACHE_HOME:-$HOME/.cache}/vouch-interop/java,
# outside the tree. A second run finds them there, fetched for the same
# pom.xml and jars.sha256, and takes well under a second.
#
# Prints the class path of the libraries on standard output; progress goes
# to standard error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vouch-interop
lib=$cache/java/lib
log() { echo "interop: $*" >&2; }

# A JDK and Maven, from Debian when missing.
missing=()
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian's ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

classpath() {
	local jar cp=
	while read -r _ jar; do
		cp+=${cp:+:}$lib/$jar
	done <"$here/java/jars.sha256"
	echo "$cp"
}

stamp=$(cat "$here/java/pom.xml" "$here/java/jars.sha256")
if [ -f "$lib/.done" ] && [ "$(cat "$lib/.done")" = "$stamp" ]; then
	classpath
	exit 0
fi

log "fetching the Java checks' libraries into $lib"
mkdir -p "$cache/java"
tmp=$(mktemp -d "$cache/java/lib.XXXXXX")
trap 'rm -rf "$tmp" "$tmp.log"' EXIT
if ! mvn -B -q --strict-checksums -f "$here/java/pom.xml" -Dmaven.repo.local="$cache/java/m2" \
	dependency:copy-dependencies -DoutputDirectory="$tmp" >"$tmp.log" 2>&1; then
	cat "$tmp.log" >&2
	log "mvn could not fetch the libraries java/pom.xml names"
	exit 1
fi
rm -f "$tmp.log"
# Exactly the jars pinned, each with its sha256.
if ! diff <(cd "$tmp" && ls -- *.jar) <(awk '{print $2}' "$here/java/jars.sha256" | sort) >&2; then
	log "the jars Maven resolved (<) are not those java/jars.sha256 pins (>)"
	exit 1
fi
(cd "$tmp" && sha256sum --check --quiet --strict "$here/java/jars.sha256") >&2
echo "$stamp" >"$tmp/.done"
rm -rf "$lib"
mv "$tmp" "$lib"
trap - EXIT
classpath

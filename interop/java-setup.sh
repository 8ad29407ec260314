#!/usr/bin/env bash
# Fetches a set of libraries of the Java checks (checks/*.java): the
# artifacts SET/pom.xml resolves to, with Maven, each checked against its
# sha256 in SET/jars.sha256, into
# ${XDG_CACHE_HOME:-$HOME/.cache}/vouch-interop/SET, outside the tree. A
# second run finds them there, fetched for the same pom.xml and
# jars.sha256, and takes well under a second.
#
#   interop/java-setup.sh java/current    the set a check names (see run.sh)
#
# Prints the class path of the libraries on standard output; progress goes
# to standard error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
set=${1:?usage: java-setup.sh SET (a folder of interop, such as java/current)}
case $set in
java/*) ;;
*)
	echo "java-setup.sh: $set is not a set of libraries under java/" >&2
	exit 2
	;;
esac
if [ ! -f "$here/$set/pom.xml" ] || [ ! -f "$here/$set/jars.sha256" ]; then
	echo "java-setup.sh: $set has no pom.xml and jars.sha256" >&2
	exit 2
fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vouch-interop
lib=$cache/$set/lib
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
	done <"$here/$set/jars.sha256"
	echo "$cp"
}

stamp=$(cat "$here/$set/pom.xml" "$here/$set/jars.sha256")
if [ -f "$lib/.done" ] && [ "$(cat "$lib/.done")" = "$stamp" ]; then
	classpath
	exit 0
fi

log "fetching the Java checks' libraries of $set into $lib"
mkdir -p "$cache/$set"
tmp=$(mktemp -d "$cache/$set/lib.XXXXXX")
trap 'rm -rf "$tmp" "$tmp.log"' EXIT
if ! mvn -B -q --strict-checksums -f "$here/$set/pom.xml" -Dmaven.repo.local="$cache/java-m2" \
	dependency:copy-dependencies -DoutputDirectory="$tmp" >"$tmp.log" 2>&1; then
	cat "$tmp.log" >&2
	log "mvn could not fetch the libraries $set/pom.xml names"
	exit 1
fi
rm -f "$tmp.log"
# Exactly the jars pinned, each with its sha256.
if ! diff <(cd "$tmp" && ls -- *.jar) <(awk '{print $2}' "$here/$set/jars.sha256" | sort) >&2; then
	log "the jars Maven resolved (<) are not those $set/jars.sha256 pins (>)"
	exit 1
fi
(cd "$tmp" && sha256sum --check --quiet --strict "$here/$set/jars.sha256") >&2
echo "$stamp" >"$tmp/.done"
rm -rf "$lib"
mv "$tmp" "$lib"
trap - EXIT
classpath

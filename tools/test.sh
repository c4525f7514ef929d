#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: first installs what the tests need, then
# `cargo test --workspace --locked`. This is the README's test command; `.ci/run` runs it.
#
# What the tests need beyond Rust:
# - the real data in ../shared (realdata/, sphinx-data/) beside the checkout, or
#   $PHONEBENCH_SHARED: tests read it in place and fail (never skip) without it;
# - Chromium, for the HTML report's browser tests: the Debian package `chromium`, installed here
#   when missing (as root or through sudo), or a binary named by $PHONEBENCH_CHROMIUM.
# - adb, Debian's real adb client, for the device tests against `phonebench fake-adb`: the
#   Debian package `adb`, installed here when missing;
# - Node.js and npm, and the npm packages in tools/npm (the MCP reference server
#   `@modelcontextprotocol/server-everything` and the official TypeScript SDK, for the MCP interop
#   tests): installed here with `npm ci` from the committed lock file; Node.js from Debian when
#   missing;
# - python3 (the deliberately broken MCP server of the failure tests is a standard-library script)
#   and a venv in tools/py/.venv with the pinned packages of tools/py/requirements.txt: the
#   official MCP Python SDK (`mcp`, whose client drives `phonebench mcp-server` in the interop
#   tests) and what the Python package's pytest suite needs (httpx, gymnasium, numpy,
#   websockets, ray, pytest; crates/cli/tests/python_package.rs runs it against this build), and
#   vncdotool, the VNC client we did not write that drives `phonebench vnc-server`;
# - Xvfb, x11vnc, x11-utils, xterm (the VNC client's test against a real server) and
#   tesseract-ocr with its English model (the element detector's OCR): installed here.
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

# Debian's real adb client, for the device tests (crates/cli/tests/device_adb.rs): it talks to
# `phonebench fake-adb`, which proves our device backend against the real adb protocol.
if ! command -v adb >/dev/null; then
  echo "tools/test.sh: installing adb (Debian package) for the device tests"
  if [ "$(id -u)" -eq 0 ]; then as_root=(env); elif command -v sudo >/dev/null; then as_root=(sudo env); else
    echo "tools/test.sh: adb is missing and neither root nor sudo is available to install it" >&2
    exit 1
  fi
  "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get update -q \
    && "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -q adb \
    || { echo "tools/test.sh: installing adb failed" >&2; exit 1; }
  command -v adb >/dev/null || { echo "tools/test.sh: adb installed but not on PATH" >&2; exit 1; }
fi

# Pixels-only devices (crates/vnc, crates/detect): a real VNC server we did not write (Debian's
# x11vnc on an Xvfb display, showing xmessage and xterm from x11-utils and xterm) for the VNC
# client's test, and Tesseract with its English model for the element detector's OCR.
vnc_packages=()
command -v Xvfb >/dev/null || vnc_packages+=(xvfb)
command -v x11vnc >/dev/null || vnc_packages+=(x11vnc)
{ command -v xmessage >/dev/null && command -v xwininfo >/dev/null && command -v xsetroot >/dev/null; } \
  || vnc_packages+=(x11-utils x11-xserver-utils)
command -v xterm >/dev/null || vnc_packages+=(xterm)
{ command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx eng; } \
  || vnc_packages+=(tesseract-ocr tesseract-ocr-eng)
if [ "${#vnc_packages[@]}" -gt 0 ]; then
  echo "tools/test.sh: installing ${vnc_packages[*]} (Debian packages) for the VNC and detector tests"
  if [ "$(id -u)" -eq 0 ]; then as_root=(env); elif command -v sudo >/dev/null; then as_root=(sudo env); else
    echo "tools/test.sh: ${vnc_packages[*]} missing and neither root nor sudo is available to install them" >&2
    exit 1
  fi
  "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get update -q \
    && "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${vnc_packages[@]}" \
    || { echo "tools/test.sh: installing ${vnc_packages[*]} failed" >&2; exit 1; }
  for tool in Xvfb x11vnc xmessage xwininfo xsetroot xterm tesseract; do
    command -v "$tool" >/dev/null || { echo "tools/test.sh: $tool installed but not on PATH" >&2; exit 1; }
  done
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "tools/test.sh: installing Node.js and npm (Debian packages) for the MCP interop tests"
  if [ "$(id -u)" -eq 0 ]; then as_root=(env); elif command -v sudo >/dev/null; then as_root=(sudo env); else
    echo "tools/test.sh: node/npm are missing and neither root nor sudo is available to install them" >&2
    exit 1
  fi
  "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get update -q \
    && "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm \
    || { echo "tools/test.sh: installing nodejs and npm failed" >&2; exit 1; }
fi
command -v python3 >/dev/null || { echo "tools/test.sh: python3 is missing (the MCP failure tests need it)" >&2; exit 1; }
# The lock file pins every package; `npm ci` installs exactly it (again only when it changed).
if ! cmp -s tools/npm/package-lock.json tools/npm/node_modules/.installed-lock.json 2>/dev/null; then
  echo "tools/test.sh: installing the npm packages of tools/npm (MCP reference server and SDK)"
  npm ci --prefix tools/npm --no-audit --no-fund --loglevel=error \
    || { echo "tools/test.sh: npm ci in tools/npm failed" >&2; exit 1; }
  cp tools/npm/package-lock.json tools/npm/node_modules/.installed-lock.json
fi

# The Python SDK, pinned with everything it pulls in (again only when the pins changed).
if ! cmp -s tools/py/requirements.txt tools/py/.venv/installed-requirements.txt 2>/dev/null; then
  echo "tools/test.sh: installing the pinned Python packages (MCP SDK, pytest, gymnasium, ray, ...) into tools/py/.venv"
  rm -rf tools/py/.venv
  python3 -m venv tools/py/.venv \
    && tools/py/.venv/bin/pip install --quiet --disable-pip-version-check -r tools/py/requirements.txt \
    || { echo "tools/test.sh: installing tools/py/requirements.txt failed" >&2; exit 1; }
  cp tools/py/requirements.txt tools/py/.venv/installed-requirements.txt
fi

# A fresh machine builds once: incremental-compilation caches would only take disk.
export CARGO_INCREMENTAL=0
exec cargo test --workspace --locked "$@"

#!/usr/bin/env bash
# Builds wgtensor and runs the main job: `wgt info` then `wgt demo` (default command).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
bash scripts/build.sh >/dev/null
./build/wgt info
./build/wgt "${@:-demo}"

#!/usr/bin/env bash
# The main job: builds wgtensor and runs a language model with `wgt run`.
# Without arguments: the built-in default model (a tiny llama-shaped model with random weights,
# generated through the GGUF writer on first use) on WebGPU when an adapter is usable (Mesa's
# lavapipe on a machine without GPU: --device webgpu), greedy, 48 tokens, then the same on the
# CPU to show that the backends agree token for token. With arguments: `wgt run ARGS` (e.g.
# -m model.gguf -p "Hi").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
echo "[run] building (build/)" >&2
bash scripts/build.sh >/dev/null
if [ $# -gt 0 ]; then
  exec ./build/wgt run "$@"
fi
args=(--temp 0 -n 48 --ignore-eos --print-tokens -p "Once upon a time")
# The WebGPU leg on any adapter, lavapipe included (`--device auto` would take the CPU on a
# software adapter: faster for real models, but this run is here to show both backends).
dev=auto
if ./build/wgt info 2>/dev/null | grep -q '^webgpu:0: '; then dev=webgpu; fi
echo "[run] wgt run ${args[*]} --device $dev" >&2
dev_out=$(./build/wgt run "${args[@]}" --device "$dev" | tee /dev/stderr)
echo "[run] the same on the CPU: wgt run ${args[*]} --device cpu" >&2
cpu_out=$(./build/wgt run "${args[@]}" --device cpu -q)
if [ "$(tail -n 1 <<<"$dev_out")" = "$(tail -n 1 <<<"$cpu_out")" ]; then
  echo "[run] the generated token ids agree on both devices" >&2
else
  echo "[run] the token ids differ between devices:" >&2
  echo "  $dev: $(tail -n 1 <<<"$dev_out")" >&2
  echo "  cpu:  $(tail -n 1 <<<"$cpu_out")" >&2
  exit 1
fi

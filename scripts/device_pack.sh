#!/usr/bin/env bash
# Packs a Release build + Dawn + the non-system shared libraries it needs into
# .devcarry/payload.tar.xz, for running benchmarks on a remote GPU machine that has no package
# registry (see BENCHMARKS.md). On that machine: scripts/device_unpack.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash scripts/build.sh >/dev/null
stage=$(mktemp -d)
mkdir -p "$stage/bin" "$stage/lib"
for f in build/wgt build/wgt_webgpu_tests build/wgt_core_tests build/bench_* build/hello_world; do
  [ -x "$f" ] && strip -o "$stage/bin/$(basename "$f")" "$f"
done
cp third_party/dawn/libwebgpu_wrapper.so "$stage/lib/"
# Debian's engine with its private runtime (scripts/setup_dawn_debian.sh), when set up: the
# prefix's layout is kept (the engine finds its runtime beside it and wgt-engine.txt above).
if [ -f third_party/dawn-debian/wgt-engine.txt ]; then
  mkdir -p "$stage/dawn-debian/usr"
  cp -a third_party/dawn-debian/wgt-engine.txt "$stage/dawn-debian/"
  cp -a third_party/dawn-debian/usr/lib "$stage/dawn-debian/usr/"
fi
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libbenchmark.so.1debian libpcre2-8.so.0 libfftw3f.so.3; do
  p=$(ldconfig -p | awk -v l="$lib" '$1==l {print $NF; exit}')
  [ -n "$p" ] && cp -L "$p" "$stage/lib/$lib"
done
mkdir -p .devcarry
# The revision the binaries were built from (the device copy has no .git): bench_suite.sh stamps it.
{ git rev-parse --short=12 HEAD; [ -n "$(git status --porcelain --untracked-files=no)" ] && echo " (uncommitted changes)"; } 2>/dev/null \
  | tr -d '\n' > .devcarry/revision || true
tar -C "$stage" -cJf .devcarry/payload.tar.xz bin lib $( [ -d "$stage/dawn-debian" ] && echo dawn-debian)
rm -rf "$stage"
ls -la .devcarry/

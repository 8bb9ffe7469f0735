#!/usr/bin/env bash
# Fetches Debian's Dawn (the "debian" engine of WGT_DAWN) and the runtime it needs into
# third_party/dawn-debian/, leaving the system's apt sources and packages untouched.
#
# libwebgpu-dawn0 exists only in Debian sid and needs glibc >= 2.43 and libstdc++ >= 16, so on
# Debian 12 / Ubuntu 24.04 it cannot be installed: the pinned .debs below are downloaded from
# the Debian mirror, checked against their sha256 and unpacked with `dpkg -x` into one prefix.
# wgtensor's executables re-start themselves under that prefix's loader when the Debian engine
# is selected and the system glibc is older (src/webgpu/dawn_runtime.cpp); nobody types a
# loader command. The -dev package brings dawn/webgpu.h, from which the Debian ABI table of
# src/webgpu/dawn_abi.cpp was written (tests/core/test_dawn_abi.cpp checks it when present).
#
# A system that has libwebgpu-dawn0 (Debian 14 / sid, Ubuntu 26.10) uses it directly: nothing is
# fetched. sid is rolling: when a pinned version has left the archive the script says so and
# exits 1 (the npm engine stays usable); update the pins below from
#   apt-cache show libwebgpu-dawn0 libwebgpu-dawn-dev libc6 libstdc++6 libgcc-s1 libabsl<ver>
# run against a private sid sources list (docs/webgpu.md, "Two engines").
# Usage: scripts/setup_dawn_debian.sh [--force]   (--force: re-fetch even if present)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$here/third_party/dawn-debian"
force=0
[ "${1:-}" = "--force" ] && force=1

DAWN_DEB_VERSION="0.0~git20260909.1a75cb7f-1"
GLIBC_VERSION="2.43"  # libwebgpu-dawn0 Depends: libc6 (>= 2.43); the pinned libc6 is 2.43-7
# pool path | sha256 (from the sid Packages index, seen 2026-12-04)
PINNED=(
  "pool/main/d/dawn/libwebgpu-dawn0_0.0~git20260909.1a75cb7f-1_amd64.deb|7b424e7ffec48e6a94d6c986f4564d1df7380284d4c6cc6bee614c7b10b8cdd0"
  "pool/main/d/dawn/libwebgpu-dawn-dev_0.0~git20260909.1a75cb7f-1_amd64.deb|209296cbbc8d7fb18c8a3c1ae67d8df5f075428546636867d2a29a24ced80a1e"
  "pool/main/g/glibc/libc6_2.43-7_amd64.deb|5c71715c51103beb4fbba9fe9f8dff604af6610dfa71c70bff342f54a7860803"
  "pool/main/g/gcc-16/libstdc++6_16.2.0-4_amd64.deb|cef6654bba1daece0bc0dbe0e3f69fa5a26eb6ba139f3536e6f4806bd787f3e7"
  "pool/main/g/gcc-16/libgcc-s1_16.2.0-4_amd64.deb|d251ea642c3795e8723ac2b9eeebe511467ca04590ba70f3d555a7616787d7e3"
  "pool/main/a/abseil/libabsl20260526_20260526.0-2+b1_amd64.deb|951c69d645eea81e17d908ff3f79b6d70a33346f65ba283d564cdab07b660952"
)
# What the prefix was made from: a prefix from other pins is replaced.
stamp_text="version=$DAWN_DEB_VERSION
glibc=$GLIBC_VERSION
$(printf '%s\n' "${PINNED[@]}" | sha256sum | cut -d' ' -f1)"

if [ "$(dpkg --print-architecture 2>/dev/null || echo unknown)" != amd64 ]; then
  echo "[setup] Debian Dawn: pinned for amd64 only; skipped on $(dpkg --print-architecture 2>/dev/null)" >&2
  exit 1
fi
if dpkg-query -W -f='${Status}' libwebgpu-dawn0 2>/dev/null | grep -q "install ok installed"; then
  echo "[setup] Debian Dawn: the system's libwebgpu-dawn0 $(dpkg-query -W -f='${Version}' libwebgpu-dawn0) is used (WGT_DAWN=debian)"
  exit 0
fi
if [ $force = 0 ] && [ -f "$prefix/wgt-engine.txt" ] && [ "$(cat "$prefix/wgt-engine.txt")" = "$stamp_text" ]; then
  echo "[setup] Debian Dawn: $DAWN_DEB_VERSION present in $prefix"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$here/scripts/debian_fetch.sh"
fetch_pinned_debs "$tmp" "Debian Dawn: libwebgpu-dawn0 $DAWN_DEB_VERSION and its runtime (glibc $GLIBC_VERSION)" \
  "Update the pins in scripts/setup_dawn_debian.sh (see its header), or install libwebgpu-dawn0 from your distribution. The npm engine (WGT_DAWN=npm, the default) stays usable." "${PINNED[@]}" || exit 1
lib="$tmp/root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
for f in ld-linux-x86-64.so.2 libc.so.6 libstdc++.so.6 libwebgpu_dawn.so.0; do
  [ -e "$lib/$f" ] || { echo "[setup] ERROR: unpacked runtime lacks $f" >&2; exit 1; }
done
printf '%s\n' "$stamp_text" > "$tmp/root/wgt-engine.txt"
rm -rf "$prefix.old"
[ -d "$prefix" ] && mv "$prefix" "$prefix.old"
mkdir -p "$(dirname "$prefix")"
mv "$tmp/root" "$prefix"
rm -rf "$prefix.old"
echo "[setup] Debian Dawn: ok, $prefix (select it with WGT_DAWN=debian)"

#!/usr/bin/env bash
# Fetches Debian sid's Mesa lavapipe (software Vulkan with VK_KHR_cooperative_matrix) and the
# libraries it needs into third_party/lavapipe-sid/, leaving the system's apt sources and
# packages untouched, so that the subgroup-matrix (tensor-core) kernels can be checked against
# the CPU reference without a GPU: scripts/test_sgmat_cpu.sh runs them (docs/webgpu.md,
# "Subgroup matrices on the CPU").
#
# Why sid's: Debian 12's lavapipe (Mesa 22.3) is rejected by Dawn and bookworm-backports' Mesa
# 25.0.7 lacks VK_KHR_cooperative_matrix; sid's Mesa 26.2.6 offers it with 8x8x8 f16 -> f32
# matrices on subgroups of 8, and Debian's Dawn (scripts/setup_dawn_debian.sh) then exposes
# chromium-experimental-subgroup-matrix. sid's Mesa needs glibc 2.43 and libstdc++ 16: it runs
# only under the private runtime of setup_dawn_debian.sh (its loader, libc and libstdc++), so
# that script must have run first; every other library lavapipe loads is pinned below and
# unpacked with `dpkg -x`. The system's Vulkan loader (libvulkan1 1.3.239) is enough: it is
# pointed at this ICD with VK_DRIVER_FILES. Only lavapipe's closure is kept (the other Mesa
# drivers and layers are deleted after unpacking).
#
# sid is rolling: when a pinned version has left the archive the script says so and exits 1,
# changing nothing. Update the pins from
#   apt-cache show mesa-vulkan-drivers libllvm<NN> <each library below>
# run against a private sid sources list (docs/webgpu.md, "Two engines"); the closure is
# `ld-linux-x86-64.so.2 --list libvulkan_lvp.so` under the Dawn runtime.
# Usage: scripts/setup_lavapipe_sid.sh [--force]   (--force: re-fetch even if present)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$here/third_party/lavapipe-sid"
runtime_prefix="$here/third_party/dawn-debian"
force=0
[ "${1:-}" = "--force" ] && force=1

MESA_VERSION="26.2.6-1"
# pool path | sha256 (from the sid Packages index, seen 2026-12-04); about 60 MiB in all
PINNED=(
  "pool/main/m/mesa/mesa-vulkan-drivers_26.2.6-1_amd64.deb|fe78bf25497ad1a7afae87cc59838fe86344d811e2e87d6f8047612fae521711"
  "pool/main/l/llvm-toolchain-22/libllvm22_22.1.8-3_amd64.deb|4c4a1219e6d3b38024f13d1781f398dc1ebeca759a3bafd2cc9dc9366e6f741e"
  "pool/main/z/z3/libz3-4_4.13.3-1.1_amd64.deb|17a0b6d5dba8db60732334ae3eb6be5f0c58f72a77304311add514a4d55bc434"
  "pool/main/libx/libxml2/libxml2-16_2.15.4+dfsg-1+b1_amd64.deb|f2b4d9acff743ff71f5409ae301452ebbb37d0d8709cf46fc9ec755d7df803ff"
  "pool/main/libe/libedit/libedit2_3.1-20260512-1_amd64.deb|85133718b6f81f44c88c4d95162e4e39af1521fbbd97d108d36294a37076a4cd"
  "pool/main/libb/libbsd/libbsd0_0.12.2-3_amd64.deb|0383e47d704a5e58080606cbcafd2f2aa725702767ccf8b877fb224d04ff38c5"
  "pool/main/libm/libmd/libmd0_1.3.0-1_amd64.deb|b93615e08319799bedd98a68643d607b06a7713365f829fb3cae131f8a3b81b1"
  "pool/main/n/ncurses/libtinfo6_6.6+20260608-2_amd64.deb|14682d1f6e35df22df0fe1eb2c09418aff0e29e2ea5a7bc0aa1bcd37192ba5a7"
  "pool/main/libf/libffi/libffi8_3.8.0-2_amd64.deb|8f52979b2f3831088c419aae858f10fd3ad7e42cc6c1d28967bae996a98223a4"
  "pool/main/z/zlib/zlib1g_1.3.dfsg+really1.3.2-4_amd64.deb|8506ce550a81ac14b047608e0df121037d9cbb10c3cc28446f68cf8c1d9d31ce"
  "pool/main/libz/libzstd/libzstd1_1.5.7+dfsg-4_amd64.deb|93e7930e4c25b918f1dd980cc1c6d4487654a248f5fa71eacb976ed7bbe954bd"
  "pool/main/e/expat/libexpat1_2.9.0-1_amd64.deb|190d7f5e45f070c42a12f708fe417d6636cb45fae71175203168bb5c3695081b"
  "pool/main/libd/libdrm/libdrm2_2.4.134-3_amd64.deb|e1a841ed70c7b7bbd9a03f41c781101d668db0d35b4eee58d7705a6c32b88aaa"
  "pool/main/w/wayland/libwayland-client0_1.26.0-1_amd64.deb|b432b1d30319f371efe776209e36143a23289285dd26d41751e89ad4a88b2c33"
  "pool/main/libd/libdisplay-info/libdisplay-info3_0.3.0-1+b1_amd64.deb|dfc160ad29f280ec15fea4d3d61536d2b477b37288b53276bbd121a185d801d6"
  "pool/main/libx/libx11/libx11-xcb1_1.8.14-1_amd64.deb|3e516f161b8306e0ee556efb45a722ccd69b4da3d809ae0735b2c5c1afb9ca90"
  "pool/main/libx/libxcb/libxcb1_1.17.0-2+b2_amd64.deb|86d6a614fe7b663610b4d170c84ef6f4371b3ef8e2af5df7e1e4a82b2c290119"
  "pool/main/libx/libxau/libxau6_1.0.11-1+b2_amd64.deb|f3046e170bd21969a063e23c1f1be28b16d82d02d3a4ea30e61c8497c6a736c2"
  "pool/main/libx/libxdmcp/libxdmcp6_1.1.5-2+b1_amd64.deb|3170f2aaf8e5ec69547c04cba0064dcb05ad08b37b9bf2c6775468dbc3b0e7ec"
  "pool/main/libx/libxcb/libxcb-dri3-0_1.17.0-2+b2_amd64.deb|0615ec62c1ac2c4849c04cd6c663d7397287e5c6e9a3fa4f4a42cbe545be4d79"
  "pool/main/libx/libxcb/libxcb-present0_1.17.0-2+b2_amd64.deb|6003cce386cf8cd7502022d8f91ffe92911e9d360477ce987eb8660294490a43"
  "pool/main/libx/libxcb/libxcb-randr0_1.17.0-2+b2_amd64.deb|a0e3b0ff8137d2fa3ef3de2b1a58f3e56f70c67e9edbf08ffaa298ecc14676e6"
  "pool/main/libx/libxcb/libxcb-shm0_1.17.0-2+b2_amd64.deb|12299c866c4b5e7b9da3ca7f1b9fbba992b744e10684e8f19830def9bc18ce67"
  "pool/main/libx/libxcb/libxcb-sync1_1.17.0-2+b2_amd64.deb|1c6b418990335aeb1259ac8e27022f6b6aa97410c0617935933abccd0aa8c831"
  "pool/main/libx/libxcb/libxcb-xfixes0_1.17.0-2+b2_amd64.deb|b9ebf6d05c193da5776c02879ca605eaa8f4baa2a847f4d562154bdeafa8966c"
  "pool/main/libx/libxshmfence/libxshmfence1_1.3.3-1+b2_amd64.deb|9fcb725191a740fc5d07609b04de5f2d60e10aac25f496848c6cf5aaae4b0204"
)
stamp_text="mesa=$MESA_VERSION
$(printf '%s\n' "${PINNED[@]}" | sha256sum | cut -d' ' -f1)"

if [ "$(dpkg --print-architecture 2>/dev/null || echo unknown)" != amd64 ]; then
  echo "[setup] sid lavapipe: pinned for amd64 only; skipped on $(dpkg --print-architecture 2>/dev/null)" >&2
  exit 1
fi
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
runtime="$runtime_prefix/usr/lib/$multiarch"
if [ ! -f "$runtime_prefix/wgt-engine.txt" ] || [ ! -e "$runtime/ld-linux-x86-64.so.2" ]; then
  echo "[setup] sid lavapipe: needs the private glibc 2.43 runtime of scripts/setup_dawn_debian.sh; run that first" >&2
  exit 1
fi
if [ $force = 0 ] && [ -f "$prefix/wgt-lavapipe.txt" ] && [ "$(cat "$prefix/wgt-lavapipe.txt")" = "$stamp_text" ]; then
  echo "[setup] sid lavapipe: Mesa $MESA_VERSION present in $prefix"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$here/scripts/debian_fetch.sh"
fetch_pinned_debs "$tmp" "sid lavapipe: mesa-vulkan-drivers $MESA_VERSION and its libraries (~60 MiB)" \
  "Update the pins in scripts/setup_lavapipe_sid.sh (see its header). Nothing was changed; only the subgroup-matrix checks on the CPU (scripts/test_sgmat_cpu.sh) need this." "${PINNED[@]}" || exit 1
lib="$tmp/root/usr/lib/$multiarch"
# Only lavapipe is used: the other Mesa drivers (~140 MiB unpacked) and layers go.
find "$lib" -maxdepth 1 \( -name 'libvulkan_*.so' ! -name libvulkan_lvp.so -o -name 'libVkLayer_*' \) -delete
rm -rf "$tmp/root/usr/share/vulkan" "$tmp/root/usr/bin"
[ -e "$lib/libvulkan_lvp.so" ] || { echo "[setup] ERROR: unpacked Mesa lacks libvulkan_lvp.so" >&2; exit 1; }
# The ICD manifest, its library relative to the manifest (the loader resolves it so), so the
# prefix needs no LD_LIBRARY_PATH for lavapipe itself.
cat > "$tmp/root/lvp_icd.json" <<JSON
{
    "file_format_version": "1.0.1",
    "ICD": {
        "library_path": "./usr/lib/$multiarch/libvulkan_lvp.so",
        "api_version": "1.4.0"
    }
}
JSON
# Every library lavapipe needs resolves inside the two prefixes (the system's are too old).
deps=$("$runtime/ld-linux-x86-64.so.2" --library-path "$runtime:$lib" --list "$lib/libvulkan_lvp.so" 2>&1) || true
if ! grep -q "libLLVM" <<<"$deps" || grep -qE 'not found|error' <<<"$deps"; then
  echo "[setup] ERROR: lavapipe's libraries are incomplete (update the pins):" >&2
  echo "$deps" >&2
  exit 1
fi
printf '%s\n' "$stamp_text" > "$tmp/root/wgt-lavapipe.txt"
rm -rf "$prefix.old"
[ -d "$prefix" ] && mv "$prefix" "$prefix.old"
mkdir -p "$(dirname "$prefix")"
mv "$tmp/root" "$prefix"
rm -rf "$prefix.old"
echo "[setup] sid lavapipe: ok, $prefix ($(du -sh "$prefix" | cut -f1)); run the subgroup-matrix tests with scripts/test_sgmat_cpu.sh"

#!/usr/bin/env bash
# wgtensor set-up for a fresh Debian 12 (bookworm) machine. Idempotent.
# Installs: build tools, GoogleTest, Google Benchmark, OpenBLAS, PCRE2, FFTW3, pybind11, NumPy, pytest
# and DLPack (the Python module, for Debian's /usr/bin/python3), Mesa lavapipe + Vulkan
# loader from bookworm-backports (Debian 12's own Mesa 22.3 lavapipe is rejected by Dawn),
# Dawn (libwebgpu_wrapper.so) from the npm package bun-webgpu-linux-x64, pinned and
# checksum-verified, into third_party/dawn/ (the "npm" engine), and Debian's Dawn
# (libwebgpu-dawn0, the "debian" engine: shader-f16 and subgroup matrices on NVIDIA) with the
# runtime it needs, pinned .debs from Debian sid unpacked into third_party/dawn-debian/
# (skipped when the system has libwebgpu-dawn0; a failure there leaves the npm engine usable).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

DAWN_NPM_PKG="bun-webgpu-linux-x64"
DAWN_NPM_VER="0.1.7"
DAWN_TGZ_SHA256="8badfecdad4e726ac12be4f29771f4cbd7ce7683b4418316a547c5bda94fb798"
DAWN_SO_SHA256="3190c3777f2c07fcf6a0640833cbf5d0cde859dc53aed6d9083946d093198788"

need_pkgs=(build-essential g++ cmake ninja-build pkg-config git ca-certificates
           googletest libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
           libpcre2-dev libfftw3-dev libeigen3-dev npm python3
           pybind11-dev python3-dev python3-numpy python3-pytest libdlpack-dev)
stamp="/var/lib/wgtensor-setup.stamp.v1"

apt_ready=0
apt_update() { if [ $apt_ready = 0 ]; then $SUDO apt-get update -qq; apt_ready=1; fi; }

# 1. Base packages (skip apt entirely when everything is present).
missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from another source (e.g. nodesource); accept any working npm.
if command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  apt_update
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 2. bookworm-backports for Mesa >= 25 (lavapipe that Dawn accepts) and its Vulkan loader.
mesa_ok=0
if dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null | grep -qE '^(2[4-9]|[3-9][0-9])\.'; then
  mesa_ok=1
fi
if [ $mesa_ok = 0 ]; then
  src=/etc/apt/sources.list.d/wgtensor-backports.sources
  if [ ! -f "$src" ]; then
    mirror=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
      mirror=$(awk '$1=="deb" && $3 ~ /^bookworm/ {print $2; exit}' /etc/apt/sources.list)
    fi
    [ -n "$mirror" ] || mirror="http://deb.debian.org/debian"
    echo "[setup] adding bookworm-backports from $mirror"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" | $SUDO tee "$src" >/dev/null
    apt_ready=0
  fi
  apt_update
  $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libvulkan1
fi

# 3. Dawn from the npm registry, pinned + verified.
dawn_dir="$here/third_party/dawn"
so="$dawn_dir/libwebgpu_wrapper.so"
if [ -f "$so" ] && echo "$DAWN_SO_SHA256  $so" | sha256sum -c --status; then
  :
else
  echo "[setup] fetching Dawn ($DAWN_NPM_PKG@$DAWN_NPM_VER) from npm"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$DAWN_NPM_PKG@$DAWN_NPM_VER" >/dev/null)
  tgz=$(ls "$tmp"/*.tgz)
  echo "$DAWN_TGZ_SHA256  $tgz" | sha256sum -c --status || { echo "[setup] ERROR: checksum mismatch for $tgz" >&2; exit 1; }
  tar xzf "$tgz" -C "$tmp"
  mkdir -p "$dawn_dir"
  cp "$tmp/package/libwebgpu_wrapper.so" "$so"
  echo "$DAWN_SO_SHA256  $so" | sha256sum -c --status || { echo "[setup] ERROR: checksum mismatch for $so" >&2; exit 1; }
  rm -rf "$tmp"
fi
echo "[setup] ok: Dawn at $so; Mesa $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers)"

# 4. The Debian engine (WGT_DAWN=debian): scripts/setup_dawn_debian.sh. Optional: the npm
#    engine above is complete without it, so its failure is reported and set-up still succeeds.
if ! "$here/scripts/setup_dawn_debian.sh"; then
  echo "[setup] note: the Debian Dawn engine is not installed (see above); the npm engine (default) is ready" >&2
fi

# 4b. Debian sid's lavapipe (scripts/setup_lavapipe_sid.sh, after the Debian engine): Vulkan
#    cooperative matrices on the CPU, so the subgroup-matrix (tensor-core) kernels are checked
#    against the CPU reference here, not only on an NVIDIA GPU. Optional like the engine.
if [ -f "$here/third_party/dawn-debian/wgt-engine.txt" ] && ! "$here/scripts/setup_lavapipe_sid.sh"; then
  echo "[setup] note: sid's lavapipe is not installed (see above); the subgroup-matrix tests need it" >&2
fi

# 5. The Python module for Debian's python3, as a development install (what `pip install -e`
#    does): a .pth file on its site path naming this checkout's build/python, where
#    scripts/build.sh (run by scripts/run.sh and scripts/test.sh) builds the module. Then
#    `python3 -c "import wgtensor"` works from any directory once the build has run.
if [ -x /usr/bin/python3 ]; then
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  $SUDO mkdir -p "$site"
  echo "$here/build/python" | $SUDO tee "$site/wgtensor-build.pth" >/dev/null
  echo "[setup] ok: python3 finds wgtensor in $here/build/python ($site/wgtensor-build.pth)"
fi

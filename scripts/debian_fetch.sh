# Sourced by scripts/setup_dawn_debian.sh and scripts/setup_lavapipe_sid.sh (not run on its
# own): downloads pinned Debian packages from the machine's own Debian mirror (the one its apt
# sources name, as for bookworm-backports), else the CDN, checks each against its pinned
# sha256 and unpacks them with `dpkg -x`. The system's apt sources and packages stay untouched.

# fetch_pinned_debs DIR LABEL HINT ENTRY...
#   ENTRY is "pool/path/pkg_ver_arch.deb|sha256". The packages land in DIR/debs and are
#   unpacked into DIR/root. LABEL prefixes the messages; HINT is printed when a pin has left
#   the archive (sid is rolling). Returns 1 for a package no mirror has, 2 for a checksum
#   mismatch.
fetch_pinned_debs() {
  local dir=$1 label=$2 hint=$3
  shift 3
  local mirrors=() m entry path sum out found
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    [ -n "$m" ] && mirrors+=("${m%/}")
  fi
  if [ -f /etc/apt/sources.list ]; then
    m=$(awk '$1=="deb" && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list)
    [ -n "$m" ] && mirrors+=("${m%/}")
  fi
  mirrors+=("http://deb.debian.org/debian")
  mkdir -p "$dir/debs" "$dir/root"
  echo "[setup] $label: fetching $# packages from ${mirrors[0]}"
  for entry in "$@"; do
    path=${entry%%|*}; sum=${entry##*|}
    out="$dir/debs/$(basename "$path")"
    found=0
    for m in "${mirrors[@]}"; do
      if curl -fsSL --retry 2 -o "$out" "$m/$path" 2>/dev/null || wget -q -O "$out" "$m/$path" 2>/dev/null; then
        found=1
        break
      fi
    done
    if [ $found = 0 ]; then
      echo "[setup] ERROR: $(basename "$path") is no longer in Debian sid (pinned; sid is rolling)." >&2
      echo "[setup]   $hint" >&2
      return 1
    fi
    if ! echo "$sum  $out" | sha256sum -c --status; then
      echo "[setup] ERROR: checksum mismatch for $m/$path" >&2
      return 2
    fi
  done
  for out in "$dir"/debs/*.deb; do dpkg -x "$out" "$dir/root"; done
}

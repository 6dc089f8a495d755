#!/usr/bin/env bash
# scripts/ci/libtorch2.sh [COMMAND...] — the second leg: the whole suite on Debian 13 (trixie) with
# its LibTorch 2.6, built with Kineto. With a COMMAND (`run 6`, `check 9`: what `./workbook run|check
# N --libtorch2` passes), that workbook command instead of the suite. A minimal trixie root is made with debootstrap in
# .cache/trixie (git ignores it; reused while it exists), the dependencies are installed there by
# the same scripts/setup-deps.sh, the source is bind-mounted in, and `./workbook test` runs
# inside with its own build folder (build-libtorch2/), as C++20 with g++ 14. Whatever is mounted is unmounted again,
# even when a step fails. Needs root (debootstrap, chroot, mount).
set -euo pipefail

ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
JAIL=${WORKBOOK_TRIXIE_ROOT:-$ROOT/.cache/trixie}
SUITE=trixie

die() { echo "libtorch2: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot and mount)"

# The Debian mirror this machine already uses: never a host name written into the repository.
debian_mirror() {
  local files=(/etc/apt/sources.list.d/*.sources)
  if [ -e "${files[0]}" ]; then
    # deb822: the URIs of the first stanza whose suites are not the security ones.
    awk 'BEGIN { RS = ""; FS = "\n" }
         /Suites:/ && !/Suites:[^\n]*security/ {
           for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, f, /[ \t]+/); print f[2]; exit } }' "${files[@]}"
    return
  fi
  awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; exit } }' \
    /etc/apt/sources.list 2>/dev/null
}

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

bind() {  # bind SOURCE TARGET_IN_JAIL
  mkdir -p "$JAIL$2"
  mount --bind "$1" "$JAIL$2"
  mounted+=("$JAIL$2")
}

make_root() {
  command -v debootstrap >/dev/null || {
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
  }
  local mirror
  mirror=$(debian_mirror)
  [ -n "$mirror" ] || die "no Debian mirror found in this machine's apt sources"
  echo "libtorch2: debootstrap $SUITE from this machine's mirror into $JAIL"
  local start=$SECONDS
  rm -rf "$JAIL.partial"
  mkdir -p "$(dirname "$JAIL")"
  debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$JAIL.partial" "$mirror" >"$JAIL.log" 2>&1 ||
    { tail -n 20 "$JAIL.log"; die "debootstrap failed (log: $JAIL.log)"; }
  echo "libtorch2: debootstrap took $((SECONDS - start)) s"
  mv "$JAIL.partial" "$JAIL"
}

# A root whose set-up did not finish (a run killed during debootstrap or apt) has no marker: the
# marker is written last, after its dependencies are installed. Such a root is rebuilt, not reused.
READY="$JAIL/.workbook-root-ready"
mounts_inside() { awk -v j="$JAIL/" 'index($2, j) == 1 { print $2 }' /proc/mounts | sort -r; }
if [ -e "$JAIL" ] && [ ! -e "$READY" ]; then
  echo "libtorch2: $JAIL was not set up completely (an interrupted run?): rebuilding it"
  # A killed run may have left its bind mounts (/src is this repository): never delete through one.
  for m in $(mounts_inside); do umount "$m" 2>/dev/null || umount -l "$m"; done
  [ -z "$(mounts_inside)" ] || die "cannot unmount what is mounted under $JAIL; unmount it and run again"
  rm -rf "$JAIL"
fi
[ -x "$JAIL/usr/bin/apt-get" ] || make_root
cp /etc/resolv.conf "$JAIL/etc/resolv.conf" 2>/dev/null || true
bind /proc /proc
bind /dev /dev
bind /sys /sys
bind "$ROOT" /src

start=$SECONDS
# setup-deps.sh is idempotent: a cached root only installs what is new.
chroot "$JAIL" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 WORKBOOK_SECOND_LEG=1 bash /src/scripts/setup-deps.sh
touch "$READY"
echo "libtorch2: dependencies ready in $((SECONDS - start)) s"
start=$SECONDS
# The machine's own OpenBLAS settings go in unchanged (never altered for a test run).
passed=()
for var in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE OMP_WAIT_POLICY WORKBOOK_WERROR; do
  [ -n "${!var+set}" ] && passed+=("$var=${!var}")
done
[ $# -gt 0 ] || set -- test
inner="cd /src && ./workbook $(printf '%q ' "$@")"
[ "$1" = test ] && inner="$inner && ./workbook doctor"
chroot "$JAIL" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 CI="${CI:-}" "${passed[@]}" \
  WORKBOOK_SECOND_LEG=1 WORKBOOK_BUILD_DIR=/src/build-libtorch2 WORKBOOK_CXX_STANDARD=20 bash -c "$inner"
echo "libtorch2: '$*' took $((SECONDS - start)) s"

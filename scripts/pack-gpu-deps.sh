#!/usr/bin/env bash
# pack-gpu-deps.sh [DEST]: on a machine with Debian's packages, packs header-only copies of the
# workbook's small dependencies (fmt, doctest, nlohmann-json, CLI11) with CMake package files of
# their own, for a GPU machine that has a torch but no package registry (scripts/gpu-check.sh).
# fmt is packed header-only (FMT_HEADER_ONLY): a compiled libfmt would tie the build to this
# machine's C++ ABI, and pip torch wheels before 2.7 use the old one. Default DEST: .cache/gpu-deps
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/.cache/gpu-deps}
for dir in fmt doctest nlohmann CLI; do
  [ -d "/usr/include/$dir" ] || { echo "pack-gpu-deps: /usr/include/$dir is missing: run scripts/setup-deps.sh first" >&2; exit 1; }
done
tmp="$dest.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include" "$tmp/lib/cmake"
cp -r /usr/include/fmt /usr/include/doctest /usr/include/nlohmann /usr/include/CLI "$tmp/include/"

# package_file PACKAGE TARGET [DEFINITIONS]: a <PACKAGE>Config.cmake that defines TARGET as an
# interface library over the packed headers.
package_file() {
  local package=$1 target=$2 definitions=${3:-}
  mkdir -p "$tmp/lib/cmake/$package"
  cat >"$tmp/lib/cmake/$package/${package}Config.cmake" <<CMAKE
# Packed by scripts/pack-gpu-deps.sh: header-only $package.
get_filename_component(_packed_root "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET $target)
  add_library($target INTERFACE IMPORTED)
  set_target_properties($target PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "\${_packed_root}/include"
                                           INTERFACE_COMPILE_DEFINITIONS "$definitions")
endif()
set(${package}_FOUND TRUE)
CMAKE
}
package_file fmt fmt::fmt FMT_HEADER_ONLY=1
package_file doctest doctest::doctest
package_file nlohmann_json nlohmann_json::nlohmann_json
package_file CLI11 CLI11::CLI11
{
  echo "packed $(date -u +%Y-%m-%dT%H:%MZ) from:"
  dpkg-query -W -f='  ${Package} ${Version}\n' libfmt-dev doctest-dev nlohmann-json3-dev libcli11-dev 2>/dev/null || true
} >"$tmp/PACKED"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "pack-gpu-deps: $(du -sh "$dest" | cut -f1) in $dest"

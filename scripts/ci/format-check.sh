#!/usr/bin/env bash
# format-check.sh: every tracked C++ file is exactly as clang-format writes it (.clang-format, with
# Debian 12's clang-format 14). CI runs it on its first leg; a diff fails CI. To mend a file:
# clang-format -i FILE.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v clang-format >/dev/null || { echo "format-check: clang-format is missing (scripts/setup-deps.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
clang-format --dry-run --Werror "${files[@]}"
echo "format-check: ${#files[@]} C++ files as .clang-format writes them"

#!/usr/bin/env bash
# Prints Carrier's version: FyneApp.toml's Version, the one place it is
# written (main.go embeds the file, so `carrier --version` says the same;
# the fyne tool stamps it into the Windows exe).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
v=$(sed -n 's/^Version *= *"\(.*\)"/\1/p' "$root/FyneApp.toml")
[ -n "$v" ] || { echo "no Version in $root/FyneApp.toml" >&2; exit 1; }
echo "$v"

#!/usr/bin/env bash
# Smoke test of the bundle built by `make bundle`: offscreen, it loads the packs, seeds a demo
# store with one sealed auto, renders that auto's PDF and opens the window for 10 seconds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${1:-dist/inspector/inspector}
export QT_QPA_PLATFORM=offscreen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" packs validate
"$bin" --data-dir "$tmp/data" demo seed --vehicles 10 --autos 1
# The first number of the demo series is the seeded auto (its termo, if any, comes after).
series=$("$bin" --data-dir "$tmp/data" store status | sed -n 's/.*"series": "\([^"]*\)".*/\1/p' | head -n1)
number="$series-000001"
echo "auto: $number"
"$bin" --data-dir "$tmp/data" render --auto "$number" --out "$tmp/x.pdf"
test -s "$tmp/x.pdf"
[[ $(head -c 4 "$tmp/x.pdf") == "%PDF" ]] || { echo "x.pdf is not a PDF" >&2; exit 1; }
# The window opens (offscreen) and keeps running until stopped: status 124 from timeout.
# `gui` reads its data folder from INSPECTOR_DATA_DIR, never the user's.
rc=0
INSPECTOR_DATA_DIR="$tmp/gui" timeout 10 "$bin" gui || rc=$?
[[ $rc == 124 ]] || { echo "the bundled GUI exited with status $rc" >&2; exit 1; }
echo "bundle smoke test: OK ($number rendered, GUI started)"

#!/usr/bin/env bash
# Renders the HTML report of the record in internal/report/testdata to a
# PNG with headless Chromium (Debian's chromium package: apt-get install
# chromium), as docs/report.png shows it. CI does not run it.
#
#   report/render.sh [OUT.png]     # default: docs/report.png
set -euo pipefail
cd "$(dirname "$0")"
out=$(realpath -m "${1:-../docs/report.png}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/wopneg-report --period week --floor a2a=1.0 --drop mcp=2025-06-18 \
  --names ../internal/report/testdata/names.txt --html "$tmp/report.html" \
  ../internal/report/testdata/record.jsonl ../internal/report/testdata/edges.jsonl >/dev/null
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$tmp/profile" --screenshot="$tmp/report.png" \
  --window-size=1200,1600 "file://$tmp/report.html" 2>"$tmp/chromium.log" || { cat "$tmp/chromium.log" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
cp "$tmp/report.png" "$out"
echo "$out: $(stat -c %s "$out") bytes"

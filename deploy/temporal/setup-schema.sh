#!/bin/sh
# One-shot (the `temporal-schema` service, temporalio/admin-tools image): creates Temporal's two
# databases on the stack's Postgres and brings their schemas to the version this admin-tools
# release ships. Safe to run at every `docker compose up`: existing databases are kept and only
# newer schema versions are applied (this is also how a Temporal upgrade migrates them).
set -eu
: "${POSTGRES_SEEDS:?}" "${DB_PORT:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
# The admin-tools image's copy; `npm run cluster` (scripts/cluster/stack.ts) passes the one
# scripts/build-temporal.sh extracted from the same Temporal release.
SCHEMA="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"

if command -v nc >/dev/null 2>&1; then
  echo "temporal-schema: waiting for ${POSTGRES_SEEDS}:${DB_PORT}"
  nc -z -w 30 "$POSTGRES_SEEDS" "$DB_PORT"
fi

tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

setup() { # $1 database, $2 versioned schema folder
  tool --db "$1" create >/dev/null 2>&1 && echo "temporal-schema: created database $1" || echo "temporal-schema: database $1 exists"
  # update-schema needs the version table that setup-schema -v 0.0 makes: a fresh database gets
  # it first; an existing one is only brought up to date.
  if ! tool --db "$1" update-schema -d "$SCHEMA/$2/versioned"; then
    tool --db "$1" setup-schema -v 0.0
    tool --db "$1" update-schema -d "$SCHEMA/$2/versioned"
  fi
}

setup "${DBNAME:-temporal}" temporal
setup "${VISIBILITY_DBNAME:-temporal_visibility}" visibility
echo "temporal-schema: done"

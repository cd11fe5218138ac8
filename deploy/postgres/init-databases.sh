#!/bin/sh
# Runs once, when the Postgres volume is first initialised (docker-entrypoint-initdb.d): a role and
# a database for the service, and (with the bundled Temporal) a role for Temporal that may create
# its own two databases (temporal, temporal_visibility: deploy/temporal/setup-schema.sh).
set -eu
: "${POSTPILOT_DB_PASSWORD:?set POSTPILOT_DB_PASSWORD in .env}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v app_password="$POSTPILOT_DB_PASSWORD" <<'SQL'
CREATE ROLE postpilot LOGIN PASSWORD :'app_password';
CREATE DATABASE postpilot OWNER postpilot;
SQL
if [ -n "${TEMPORAL_DB_PASSWORD:-}" ]; then
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_password';
SQL
fi

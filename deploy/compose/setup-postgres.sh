#!/bin/sh
# Creates Temporal's two PostgreSQL databases and brings their schemas to the
# version the server image expects. Runs once, in the admin-tools image, before
# the server starts (docker-compose.yml); safe to run again. Runs natively too
# (dev/cluster/cluster.ts): SCHEMA_DIR then points at the schema/ folder of the
# go.temporal.io/server module, which the image holds at /etc/temporal/schema.
set -eu
: "${POSTGRES_SEEDS:?POSTGRES_SEEDS is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
port="${DB_PORT:-5432}"
schemas="${SCHEMA_DIR:-/etc/temporal/schema}"
sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$port" "$@"; }
for db in temporal temporal_visibility; do
  schema=$([ "$db" = temporal ] && echo temporal || echo visibility)
  sql --db "$db" create || true   # already there on a second run
  sql --db "$db" setup-schema -v 0.0 || true   # likewise; update-schema below fails if it is really missing
  sql --db "$db" update-schema -d "$schemas/postgresql/v12/$schema/versioned"
done
echo "schemas ready"

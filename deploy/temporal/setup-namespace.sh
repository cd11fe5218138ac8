#!/bin/sh
# One-shot (the `temporal-namespace` service, temporalio/admin-tools image), after the server is
# up: creates the namespace and the service's custom search attributes, PostId and OrganizationId
# (Keyword), used to find a post's workflow in the web UI. The API registers the same attributes
# at every start (api/main.ts, ensureSearchAttributes); doing it here too means they exist, and
# the server's search-attribute cache has caught up, before the first post is scheduled.
set -eu
NS="${TEMPORAL_NAMESPACE:-default}"
ADDR="${TEMPORAL_ADDRESS:-temporal:7233}"

tries=0
until temporal operator cluster health --address "$ADDR" >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 30 ] || { echo "temporal-namespace: $ADDR not healthy after 60 s"; exit 1; }
  sleep 2
done

if temporal operator namespace describe --namespace "$NS" --address "$ADDR" >/dev/null 2>&1; then
  echo "temporal-namespace: namespace $NS exists"
else
  temporal operator namespace create --namespace "$NS" --retention "${TEMPORAL_RETENTION:-720h}" --address "$ADDR"
  echo "temporal-namespace: created namespace $NS"
fi

# A new namespace takes a few seconds to reach the server's namespace cache.
tries=0
until existing=$(temporal operator search-attribute list --namespace "$NS" --address "$ADDR" 2>&1); do
  tries=$((tries + 1))
  [ "$tries" -lt 30 ] || { echo "temporal-namespace: $existing"; exit 1; }
  sleep 2
done
for name in PostId OrganizationId; do
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "temporal-namespace: search attribute $name exists"
  else
    temporal operator search-attribute create --namespace "$NS" --name "$name" --type Keyword --address "$ADDR"
  fi
done
echo "temporal-namespace: done"

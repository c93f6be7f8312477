#!/bin/sh
# Waits for the server, creates the namespace (with a retention) and the
# harness's search attributes (workflows/search-attributes.ts), and exits 0
# only once `search-attribute list` shows every one of them with its type.
# Otherwise it exits non-zero saying what is missing and why, so the compose
# file restarts it (restart: on-failure) and the workers, which wait for its
# success, do not start on a namespace where `temporal workflow list --query
# 'AgentStatus=…'` fails. Safe to run again. Runs natively too (npm run
# test:cluster runs it as is; docs/cluster.md).
#   TEMPORAL_ADDRESS     the frontend (default temporal:7233)
#   DEFAULT_NAMESPACE    default: default
#   NAMESPACE_RETENTION  how long closed runs' histories are kept, set when
#                        the namespace is created (default 168h, 7 days; the
#                        CLI's own default is 72h). An existing namespace
#                        keeps its retention: change it with
#                        `temporal operator namespace update -n NS --retention 336h`.
#   SETUP_ATTEMPTS       tries for each step, 2 s apart (default 60)
set -eu
ns="${DEFAULT_NAMESPACE:-default}"
addr="${TEMPORAL_ADDRESS:-temporal:7233}"
retention="${NAMESPACE_RETENTION:-168h}"
attempts="${SETUP_ATTEMPTS:-60}"
# Name=Type, as workflows/search-attributes.ts defines them (test/cluster checks the two agree).
attributes="AgentStatus=Keyword AgentModel=Keyword AgentTurns=Int AgentCostUsd=Double AgentAwaitingTool=Keyword
AgentAwaitingCallId=Keyword AgentPendingArgsHash=Keyword AgentAwaitingSince=Datetime AgentAwaitingExpiresAt=Datetime AgentExitReason=Text AgentErrorType=Keyword AgentParent=Keyword AgentForkOf=Keyword"

fail() { echo "create-namespace: $*" >&2; exit 1; }

tries=0
until temporal operator cluster health --address "$addr" >/dev/null 2>&1; do
  tries=$((tries + 1)); [ "$tries" -ge "$attempts" ] && fail "server at $addr not healthy after $tries tries"
  sleep 2
done

# Created once; a create that races another run of this job fails, and the
# describe of the next pass sees the namespace.
tries=0
until temporal operator namespace describe -n "$ns" --address "$addr" >/dev/null 2>&1; do
  tries=$((tries + 1)); [ "$tries" -ge "$attempts" ] && fail "namespace $ns not created after $tries tries: ${err:-}"
  err=$(temporal operator namespace create -n "$ns" --retention "$retention" --address "$addr" 2>&1) && echo "namespace $ns created (retention $retention)" || sleep 2
done

# The namespace cache of a fresh server lags its creation: adding attributes
# can fail with "Namespace default is not found" for a while. Retry until the
# list shows each one with its type, keeping the last error to report.
check() { # sets $todo to the missing Name=Type pairs
  todo=""
  if ! list=$(temporal operator search-attribute list -n "$ns" --address "$addr" 2>&1); then
    err="$list"; todo="$attributes"; return 0
  fi
  for pair in $attributes; do
    name=${pair%%=*}; type=${pair#*=}
    # The list is a table: "  Name   Type".
    printf '%s\n' "$list" | grep -Eq "^[[:space:]]*${name}[[:space:]]+${type}[[:space:]]*$" && continue
    have=$(printf '%s\n' "$list" | awk -v n="$name" '$1 == n { print $2 }')
    [ -n "$have" ] && fail "search attribute $name exists on $ns as $have; the harness needs $type (remove it, or use another namespace)"
    todo="$todo $pair"
  done
}
tries=0
check
while [ -n "$todo" ]; do
  tries=$((tries + 1))
  [ "$tries" -ge "$attempts" ] && fail "search attributes missing on $ns after $tries tries:$todo — last error: ${err:-none}"
  for pair in $todo; do
    out=$(temporal operator search-attribute create -n "$ns" --address "$addr" --name "${pair%%=*}" --type "${pair#*=}" 2>&1) || err="$out"
  done
  check
  [ -n "$todo" ] && sleep 2
done
echo "namespace $ns ready ($tries retries): search attributes" $attributes

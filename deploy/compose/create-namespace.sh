#!/bin/sh
# Waits for the server, then creates the namespace and the harness's search
# attributes (workflows/search-attributes.ts) if they are missing. The workers
# register the attributes too; doing it here lets `temporal workflow list
# --query 'AgentStatus=…'` work before the first worker starts.
set -eu
ns="${DEFAULT_NAMESPACE:-default}"
addr="${TEMPORAL_ADDRESS:-temporal:7233}"
tries=0
until temporal operator cluster health --address "$addr" >/dev/null 2>&1; do
  tries=$((tries + 1)); [ "$tries" -ge 60 ] && { echo "server not healthy"; exit 1; }
  sleep 2
done
temporal operator namespace describe -n "$ns" --address "$addr" >/dev/null 2>&1 || temporal operator namespace create -n "$ns" --address "$addr"
for pair in AgentStatus=Keyword AgentModel=Keyword AgentTurns=Int AgentCostUsd=Double AgentAwaitingTool=Keyword \
            AgentAwaitingCallId=Keyword AgentExitReason=Text AgentErrorType=Keyword AgentParent=Keyword; do
  temporal operator search-attribute create -n "$ns" --address "$addr" --name "${pair%%=*}" --type "${pair#*=}" 2>/dev/null || true
done
echo "namespace $ns ready"

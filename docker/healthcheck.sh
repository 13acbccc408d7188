#!/bin/sh
# The images' HEALTHCHECK. `depthmask live` publishing on ZeroMQ (compose's live service sets
# DEPTHMASK_HEALTH_ENDPOINT to its --publish endpoint) is healthy while masked frames come out: one
# frame within DEPTHMASK_HEALTH_TIMEOUT seconds (default 10), received like any subscriber would. A
# camera that stopped, a stuck GPU or a runner that died all turn it unhealthy; with a restart policy
# the container is then restarted by whatever watches health (compose's `restart` acts on exits).
# Without an endpoint (a batch `run`, `info`) there is nothing to probe: healthy while it runs.
endpoint=${DEPTHMASK_HEALTH_ENDPOINT:-}
[ -n "$endpoint" ] || exit 0
exec depthmask_live_subscriber "$endpoint" 1 "${DEPTHMASK_HEALTH_TIMEOUT:-10}" >/dev/null

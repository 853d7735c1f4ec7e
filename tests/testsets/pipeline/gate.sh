#!/usr/bin/env bash
# Gate a model on a guarded test set: a CI step written from the README alone (bash, curl and the CLI).
#   SERVER        the meter-dashboard server, e.g. http://localhost:5006
#   TOKEN         this pipeline's tenant token (meter-dashboard testset token NAME --tenant ci)
#   TESTSET       the guarded test set's name
#   PREDICTIONS   the model's predictions, an id,prediction CSV with one row per test example
#   VAL_ACCURACY  the model's accuracy on the team's own validation set
# Exit status: 0 the model passes; 1 an alarm (a signal at or above the test set's --alarm-signal, too
# few labels, ...), a refusal (budget used up, test set retired, hourly cap) or an ease.ml/ci commit that
# fails; 2 bad input (a wrong token, a malformed file); 3 no answer after the CLI's retries (the same key
# is sent each time, so nothing is spent twice; stderr names the key). The answer is left in answer.json.
set -euo pipefail

# 1. Wait until the server is ready: /api/health answers 200 once the store is reachable (503 before).
for attempt in $(seq 1 60); do
  if curl -fsS "$SERVER/api/health" > health.json 2> /dev/null; then break; fi
  if [ "$attempt" = 60 ]; then echo "the server at $SERVER is not ready" >&2; exit 2; fi
  sleep 1
done

# 2. Submit. The answer holds the signal, never the test score; --fail-on-alarm exits 1 when an entry
#    of "alarms" has level "alarm" (notes, such as using the last planned step, never fail a build).
status=0
meter-dashboard testset submit "$TESTSET" --server "$SERVER" --token "$TOKEN" \
  --predictions "$PREDICTIONS" --val-accuracy "$VAL_ACCURACY" --fail-on-alarm --format json > answer.json || status=$?
cat answer.json
exit "$status"

#!/usr/bin/env bash
# Runs a command (by default the README's test command, `mvn -B verify`) beside a CPU hog: one busy loop at normal
# priority, which the kernel's scheduler moves between the cores like any other process. It is how the suite is
# checked on a busy machine: a sender or receiver that loses its CPU for a while is a real condition on a user's
# host, and every exactness test must hold through it (or say, in its skip reason, that its premise did not).
#
#   scripts/stress.sh                      the whole suite beside one hog
#   scripts/stress.sh bash .ci/run         CI's script beside one hog
#   STRESS_HOGS=2 scripts/stress.sh mvn -B verify -Dtest=LabSystemTest -Dsurefire.failIfNoSpecifiedTests=false
#
# STRESS_HOGS (default 1) busy loops; each stops by itself after STRESS_MAX seconds (default 3600) and when the
# command ends. The command's exit code is this script's.
set -euo pipefail
cd "$(dirname "$0")/.."

hogs=${STRESS_HOGS:-1}
max=${STRESS_MAX:-3600}
[[ "$hogs" =~ ^[0-9]+$ ]] || { echo "stress.sh: STRESS_HOGS must be a whole number" >&2; exit 2; }
[[ "$max" =~ ^[0-9]+$ ]] && [ "$max" -gt 0 ] || { echo "stress.sh: STRESS_MAX must be seconds, above 0" >&2; exit 2; }

pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap stop EXIT INT TERM
for _ in $(seq 1 "$hogs"); do
  timeout "$max" sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "stress.sh: $hogs CPU hog(s) running (pids ${pids[*]}, at most ${max}s)" >&2

if [ $# -eq 0 ]; then
  set -- mvn -B verify
fi
status=0
"$@" || status=$?
exit $status

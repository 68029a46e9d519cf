#!/usr/bin/env bash
# JMH benchmarks of the hot paths (header codec, sequence tracker, flow receiver, send loop) with allocation per
# operation (-prof gc). Builds the benchmarks module against the installed probe-core, then runs the uber jar.
#
#   scripts/bench/jmh.sh                      # everything, results also in benchmarks/target/jmh-result.json
#   scripts/bench/jmh.sh SequenceTracker      # a regex of benchmark names; any other JMH option works too
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if ! mvn -B -o -q -pl benchmarks package 2>/dev/null; then
  mvn -B -q -pl probe-core install -DskipTests
  mvn -B -q -pl benchmarks package
fi
exec java -jar benchmarks/target/benchmarks.jar -prof gc -rf json -rff benchmarks/target/jmh-result.json "$@"

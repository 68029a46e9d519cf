#!/usr/bin/env bash
# JMH benchmarks of the hot paths (header codec, sequence tracker, flow receiver, send loop, the UDP transport's send
# path, every transport's send and receive paths: DeliveryPathBenchmark) with allocation per operation
# (-prof gc). Builds the benchmarks module and what it uses, then runs the jar.
#
#   scripts/bench/jmh.sh                      # everything, results also in benchmarks/target/jmh-result.json
#   scripts/bench/jmh.sh SequenceTracker      # a regex of benchmark names; any other JMH option works too
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
# -am builds probe-core and the transports (the path benchmarks') in the same reactor: nothing is installed.
mvn -B -o -q -pl benchmarks -am package -DskipTests
exec java -jar benchmarks/target/benchmarks.jar -prof gc -rf json -rff benchmarks/target/jmh-result.json "$@"

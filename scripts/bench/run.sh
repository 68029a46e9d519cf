#!/usr/bin/env bash
# One command: installs sockperf, iperf3, irtt and Aeron's sample jar if missing, then runs lossprobe side by side
# with each reference on 127.0.0.1 and prints the ratios and a JSON record. Not part of the test suite.
#
#   scripts/bench/run.sh [--duration 3] [--repeat 3] [--out bench-result.json] [--only udp,udpref,pacing,tcp,aeron,latency,timestamps] [--udp-variants 'udp.send=native;udp.send=netty'] [--aeron-threading SHARED] [--lab PREFIX]
#
# --lab PREFIX runs the latency section and the udpref pairs between scripts/lab.sh's namespaces (LAB_PREFIX=PREFIX scripts/lab.sh up 1).
#
# LOSSPROBE_JAR overrides the jar (default lossprobe-cli/target/lossprobe.jar, built if missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${LOSSPROBE_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lossprobe-bench}"
aeron_version=1.51.0

if ! command -v sockperf >/dev/null || ! command -v iperf3 >/dev/null || ! command -v irtt >/dev/null; then
  echo "bench: installing sockperf, iperf3 and irtt (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq sockperf iperf3 irtt >/dev/null
fi
aeron_jar="$cache/aeron-all-$aeron_version.jar"
if [ ! -f "$aeron_jar" ]; then
  echo "bench: fetching io.aeron:aeron-all:$aeron_version from Maven Central" >&2
  mkdir -p "$cache"
  mvn -B -q dependency:copy -Dartifact="io.aeron:aeron-all:$aeron_version" -DoutputDirectory="$cache" >&2
fi
jar="${LOSSPROBE_JAR:-$root/lossprobe-cli/target/lossprobe.jar}"
if [ ! -f "$jar" ]; then
  echo "bench: building $jar" >&2
  (cd "$root" && mvn -B -q -DskipTests package -pl lossprobe-cli -am) >&2  # builds in the checkout, installs nothing
fi
# The C reference of the udpref pairs (scripts/bench/c/udpref.c); without gcc those pairs are skipped with a line.
udpref_args=()
if command -v gcc >/dev/null; then
  mkdir -p "$cache"
  if gcc -O2 -Wall -o "$cache/udpref" "$root/scripts/bench/c/udpref.c" -lpthread; then
    udpref_args=(--udpref "$cache/udpref")
  else
    echo "bench: udpref.c did not compile: the udpref pairs are skipped" >&2
  fi
else
  echo "bench: gcc not found: the udpref pairs (C UDP_SEGMENT + recvmmsg reference) are skipped" >&2
fi
exec python3 "$root/scripts/bench/bench.py" --jar "$jar" --aeron-jar "$aeron_jar" "${udpref_args[@]}" "$@"

#!/usr/bin/env bash
# Nightly lossprobe: a modest run, the policy check, a Prometheus textfile and a report over the history.
#
#   scripts/nightly.sh                         # uses the defaults below (bin/lossprobe-nightly in the archive)
#   LOSSPROBE_HOME=/var/lib/lossprobe POLICY=/etc/lossprobe/policy.json scripts/nightly.sh
#
# Layout under $LOSSPROBE_HOME:
#   history/YYYY-MM-DD/lossprobe-HHMMSS.json   every night's result (kept $KEEP_DAYS days)
#   history/YYYY-MM-DD/check.txt, junit.xml    the check's output
#   report.html                                the report over every kept night (draws the trend)
#   baseline.json                              optional: a known-good result; used when the policy names none
# The textfile goes to $TEXTFILE_DIR/$TEXTFILE_NAME (node_exporter --collector.textfile.directory); give each job
# its own name (lossprobe-<target>.prom) when several run on one host.
#
# Exit code: the check's (0 pass, 1 a threshold failed, 2 bad input); the run's own if it failed first.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
LOSSPROBE="${LOSSPROBE:-$here/lossprobe}"
LOSSPROBE_HOME="${LOSSPROBE_HOME:-$HOME/lossprobe-nightly}"
# The example policy: beside the script in a checkout or the archive, in /etc/lossprobe from the Debian package.
default_policy="$here/../docs/examples/policy.json"
[ -f "$default_policy" ] || default_policy=/etc/lossprobe/policy.json
POLICY="${POLICY:-$default_policy}"
TEXTFILE_DIR="${TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}"
TEXTFILE_NAME="${TEXTFILE_NAME:-lossprobe.prom}"
KEEP_DAYS="${KEEP_DAYS:-120}"
# A modest plan: a few minutes on a small machine. Override with LOSSPROBE_RUN_ARGS.
RUN_ARGS=(${LOSSPROBE_RUN_ARGS:---ports 16 --levels 10k,50k,100k --duration 5s --warmup 1s --drain 1s})

day="$(date -u +%Y-%m-%d)"
out_dir="$LOSSPROBE_HOME/history/$day"
mkdir -p "$out_dir"
result="$out_dir/lossprobe-$(date -u +%H%M%S).json"

status=0
"$LOSSPROBE" run --quiet "${RUN_ARGS[@]}" -o "$result" || status=$?
if [ "$status" -ne 0 ] && [ ! -s "$result" ]; then
  echo "nightly: run failed (exit $status) and wrote no result" >&2
  exit "$status"
fi

check_args=(--policy "$POLICY" --junit "$out_dir/junit.xml")
if [ -d "$TEXTFILE_DIR" ] && [ -w "$TEXTFILE_DIR" ]; then
  check_args+=(--prometheus "$TEXTFILE_DIR/$TEXTFILE_NAME")
else
  echo "nightly: $TEXTFILE_DIR not writable; writing the textfile to $out_dir/lossprobe.prom" >&2
  check_args+=(--prometheus "$out_dir/$TEXTFILE_NAME")
fi
if [ -f "$LOSSPROBE_HOME/baseline.json" ]; then
  check_args+=(--baseline "$LOSSPROBE_HOME/baseline.json")
fi
check=0
"$LOSSPROBE" check "${check_args[@]}" "$result" >"$out_dir/check.txt" 2>&1 || check=$?
cat "$out_dir/check.txt"

# Old nights go; the report covers what is kept.
find "$LOSSPROBE_HOME/history" -mindepth 1 -maxdepth 1 -type d -mtime +"$KEEP_DAYS" -exec rm -rf {} +
mapfile -t results < <(find "$LOSSPROBE_HOME/history" -name 'lossprobe-*.json' -type f | sort)
"$LOSSPROBE" report --quiet --policy "$POLICY" -o "$LOSSPROBE_HOME/report.html" "${results[@]}"
echo "nightly: ${#results[@]} result(s); report: $LOSSPROBE_HOME/report.html; check exit $check"

if [ "$status" -ne 0 ]; then
  exit "$status"
fi
exit "$check"

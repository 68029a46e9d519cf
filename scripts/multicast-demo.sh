#!/usr/bin/env bash
# A multicast run on this one host, in one command (docs/multicast.md): builds the namespace lab (scripts/lab.sh)
# with one sender and three receivers, starts a lossprobe serve in each receiver with a secret made for the demo
# (lossprobe keygen), drops LOSS % (default 1) of the group's datagrams on the second receiver's link only, sends a
# short raw-UDP multicast run to group 239.255.0.1 from the sender, and prints the step table (a line per receiver)
# and what nftables dropped on that link, which that receiver's "lost" equals. Everything is torn down on exit,
# Ctrl-C included. Multicast runs only inside the lab's namespaces, never on this host's own interfaces.
#
#   sudo scripts/multicast-demo.sh
#
# Needs root, iproute2, nftables and Java 17. Environment: LAB_PREFIX (default md-: the lab's namespaces md-tx1,
# md-mr1..3), LOSS (percent, default 1), BASE_PORT (default 45000), LOSSPROBE (the lossprobe command, default
# scripts/lossprobe, which builds the jar on first use). Bounded: a serve that is not listening within 60 s, or a run
# that takes over 120 s, ends the demo (exit 1).
set -euo pipefail

cd "$(dirname "$0")/.."
export LAB_PREFIX=${LAB_PREFIX:-md-}
LOSS=${LOSS:-1}
BASE_PORT=${BASE_PORT:-45000}
read -r -a LP <<< "${LOSSPROBE:-scripts/lossprobe}"
GROUP=239.255.0.1
P=$LAB_PREFIX

die() { echo "multicast-demo.sh: $*" >&2; exit "${2:-2}"; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces and nftables): sudo $0"
command -v nft >/dev/null || die "needs nftables (apt-get install nftables)"
[[ "$LOSS" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "LOSS must be a percentage (1, 0.5), not '$LOSS'"

work=$(mktemp -d)
serves=()
cleanup() {
  trap - EXIT INT TERM
  for pid in "${serves[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${serves[@]}"; do wait "$pid" 2>/dev/null || true; done
  scripts/lab.sh down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "multicast-demo.sh: interrupted, tearing down" >&2; exit 130' INT TERM

# Builds the jar now (scripts/lossprobe does on first use), not inside a namespace with a serve waiting.
"${LP[@]}" keygen "$work/secret" >/dev/null
scripts/lab.sh up 1 >/dev/null
scripts/lab.sh mcast 3 >/dev/null
scripts/lab.sh mcast-loss "${P}mr2" "$LOSS" >/dev/null
receivers=()
for i in 1 2 3; do
  ip netns exec "${P}mr$i" "${LP[@]}" serve --bind "198.18.0.10$i" --secret-file "$work/secret" \
    > "$work/serve$i.log" 2>&1 &
  serves+=($!)
  receivers+=(--receiver "198.18.0.10$i")
done
for i in 1 2 3; do
  for _ in $(seq 300); do
    grep -q "listening on" "$work/serve$i.log" && break
    kill -0 "${serves[$((i - 1))]}" 2>/dev/null || die "the serve in ${P}mr$i ended: $(cat "$work/serve$i.log")" 1
    sleep 0.2
  done
  grep -q "listening on" "$work/serve$i.log" || die "the serve in ${P}mr$i is not listening after 60 s" 1
done

echo "multicast demo: ${P}tx1 198.18.0.11 sends to $GROUP; receivers ${P}mr1..3 198.18.0.101-103;" \
  "$LOSS % dropped on ${P}mr2's link only"
status=0
timeout 120 ip netns exec "${P}tx1" "${LP[@]}" run --multicast "$GROUP" "${receivers[@]}" \
  --secret-file "$work/secret" --transport udp --levels 20k --duration 1s --warmup 0 --ports 4 \
  --base-port "$BASE_PORT" -o "$work/result.json" --quiet || status=$?
# Each receiver's link as nftables counted it: datagrams = (bytes - 28 x packets) / 64 (a GSO packet counts once).
datagrams() { # NS COUNTER
  ip netns exec "$1" nft list counter netdev lossprobe_mcast "$2" \
    | awk '/packets/ { for (i = 1; i < NF; i++) { if ($i == "packets") p = $(i + 1); if ($i == "bytes") b = $(i + 1) } }
           END { print (b - 28 * p) / 64 }'
}
for i in 1 2 3; do
  echo "nftables at ${P}mr$i (198.18.0.10$i): arrived $(datagrams "${P}mr$i" arrived)," \
    "dropped $(datagrams "${P}mr$i" dropped)"
done
exit $status

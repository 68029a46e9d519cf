#!/usr/bin/env bash
# A lab of network namespaces for lossprobe: one receiver host and N sender hosts on a switch, on the RFC 2544
# benchmarking range 198.18.0.0/15 and, beside it, the RFC 5180 IPv6 benchmarking prefix 2001:2::/48, with nftables
# loss, duplication and rate shaping whose counters are the ground truth lossprobe's figures are checked against.
# Every rule below acts on IPv4 and IPv6 alike. Needs root, iproute2 and nftables.
#
#   scripts/lab.sh up [SENDERS]        create (or re-create) the lab: lp-rx 198.18.0.1 and 2001:2::1, lp-tx1
#                                      198.18.0.11 and 2001:2::11, ...; in the lab's namespaces the names rx, tx1,
#                                      ... resolve to both (a name with both families, for -4 and -6)
#   scripts/lab.sh loss PCT [PROTO]    drop PCT % of PROTO (udp|tcp, default udp) packets arriving at lp-rx
#   scripts/lab.sh blackout MS [PROTO] drop every PROTO (udp|tcp, default udp) data packet arriving at lp-rx for MS
#                                      ms (1-60000), then let them pass again; the drops stay in "dropped"
#   scripts/lab.sh dup PCT             duplicate PCT % of UDP packets leaving each sender towards lp-rx
#   scripts/lab.sh shape RATE [LATENCY] [BURST]  shape the data into lp-rx to RATE: tc tbf on the switch port
#                                      (e.g. 20mbit; LATENCY default 50ms, BURST 64kb); the control port passes
#                                      unshaped, so the tbf's drop counter counts data only
#   scripts/lab.sh shape-class CLASS RATE [LATENCY] [BURST]  shape only the data of DSCP CLASS (ef, cs1, ...) into
#                                      lp-rx to RATE, every other class unshaped: a priority queue ("shaped")
#   scripts/lab.sh shape-tx RATE [HOST] shape a sender's own egress (tc tbf on HOST's eth0, default lp-tx1)
#   scripts/lab.sh link-loss HOST PCT [PROTO]  drop PCT % of PROTO packets on HOST's link in both directions
#                                      (into HOST and out of it), counted per peer host: for a mesh
#   scripts/lab.sh count-dscp CLASS... count the data arriving at lp-rx per traffic class (ef, cs1, af41, 0-63:
#                                      nftables' names), in its own ingress chain: "dscp" in counters; and the
#                                      data leaving it (replies, ACKs, --reverse), at the switch: "dscpFromRx"
#   scripts/lab.sh remark FROM TO [HOST]  re-mark at the switch the data from HOST (default lp-tx1) to lp-rx that
#                                      carries DSCP FROM as TO (a path that bleaches a class): "remarked" in counters
#   scripts/lab.sh counters            print the lab's counters as JSON: nftables (packets and bytes), the
#                                      senders' egress qdisc drops and Udp SndbufErrors / Ip OutDiscards, and
#                                      with link-loss the drops per direction and peer, with shape the data
#                                      tbf's packets, bytes and drops ("shaped")
#   scripts/lab.sh cut-control         drop the control connection (TCP port 7400) at the switch, both ways, without
#                                      FIN or RST: each side sees its peer fall silent ("cut" in counters)
#   scripts/lab.sh data                the data packets the switch has forwarded so far, as "TO_RX FROM_RX" (UDP and
#                                      TCP to or from lp-rx, the control port excepted): poll it to see when a side
#                                      stopped sending; "data" in counters
#   scripts/lab.sh clear               remove loss, duplication, shaping, cuts, class counting and re-marking (nftables and qdisc counters reset)
#   scripts/lab.sh hosts [-6]          every host as "NAME ADDRESS", one a line (a host list for lossprobe mesh);
#                                      -6: their IPv6 addresses
#   scripts/lab.sh nat                 (after up) put a controller host lp-ctl behind a NAT: a router lp-nat on the
#                                      switch at 198.18.0.250 masquerades lp-ctl's private subnet 198.18.1.0/24
#                                      (lp-ctl 198.18.1.2, its default route via lp-nat's 198.18.1.1; IPv4 only).
#                                      lp-nat passes only what conntrack maps back: a packet to 198.18.0.250 that no
#                                      mapping claims is dropped and counted ("nat" in counters: "out" and "in" what
#                                      it forwarded each way, "unmapped" what it dropped)
#   scripts/lab.sh nat-loss PCT        (after nat) drop PCT % of the UDP packets lp-nat forwards in to lp-ctl (the
#                                      way back a punch opened): "dropped" under "nat" in counters
#   scripts/lab.sh mcast N             (after up) add N multicast receiver hosts lp-mr1 198.18.0.101, lp-mr2
#                                      198.18.0.102, ... (1-20; IPv6 2001:2::101, ...) on the switch, which then
#                                      floods multicast to every port (IGMP/MLD snooping off); every lab host routes
#                                      239.255.0.0/16 and ff15::/16 out of its eth0 (TTL / hop limit 1 keeps it on
#                                      the switch). Each receiver counts the group UDP
#                                      arriving at its eth0 ("mcast" in counters: "arrived" and "dropped" per host)
#   scripts/lab.sh mcast-loss HOST PCT [aeron|aeron-mdc]  drop PCT % of the multicast UDP (239.255.0.0/16, ff15::/16)
#                                      arriving at receiver HOST (lp-mr2, ...) only, on its eth0's ingress: "dropped"
#                                      under "mcast" in counters; with aeron only Aeron data datagrams (never
#                                      heartbeats, SETUPs or padding); "aeronData" counts the Aeron data datagrams
#                                      that arrived for a group, "mdcData" those for the host's own address
#                                      (multi-destination-cast's copies); with aeron-mdc it drops those copies
#   scripts/lab.sh mcast-loss-every HOST N PHASE  drop every Nth packet of the multicast UDP arriving at receiver
#                                      HOST, from the PHASEth (0..N-1): two receivers with one N and phases apart
#                                      never drop the same packet (each sees the group in the switch's order)
#   scripts/lab.sh mcast-loss-sender PCT [HOST]  drop PCT % of the multicast UDP a sender (default lp-tx1) sends,
#                                      where it enters the switch, before the switch floods it to the receivers:
#                                      what every receiver then misses ("sender" under "mcast" in counters:
#                                      "dropped", packets and bytes)
#   scripts/lab.sh mcast-shape HOST RATE [LATENCY] [BURST]  shape the UDP (multicast and MDC) into receiver HOST to RATE
#                                      (tc tbf on its switch port; the rest unshaped): "shaped" under HOST in "mcast"
#   scripts/lab.sh mcast-hosts         every multicast receiver as "NAME ADDRESS", one a line
#   scripts/lab.sh exec HOST CMD...    run CMD inside lp-rx, lp-tx1, lp-ctl, ...
#   scripts/lab.sh down                remove everything the lab created
#
# LAB_PREFIX (default lp-) prefixes every namespace, so labs with different prefixes coexist (each namespace is its
# own network stack; the addresses repeat from lab to lab). Up to 30 senders.
# Only the lab's own data ports are touched (udp/tcp 1024-65535 except the control port 7400). The switch counts
# every data packet to and from lp-rx from the moment the lab is up (its "watch" table), and cut-control drops there.
set -euo pipefail

P=${LAB_PREFIX:-lp-}
[[ "$P" =~ ^[a-z][a-z0-9]{0,5}-$ ]] || { echo "lab.sh: LAB_PREFIX must be a short lowercase name ending in '-' (lp-, lm-)" >&2; exit 2; }
RX=${P}rx
SW=${P}sw
BR=${P%-}br0
VETH=${P%-}v   # the host's end, renamed eth0 in the host
PORT=${P%-}p   # the switch's end
RX_ADDR=198.18.0.1
RX_ADDR6=2001:2::1
MAX_SENDERS=30
NAT=${P}nat
CTL=${P}ctl
NAT_ADDR=198.18.0.250    # the router's leg on the switch: the address the NAT's hosts appear from
NAT_INSIDE=198.18.1.1    # its leg on the private subnet
CTL_ADDR=198.18.1.2
PORTS="1024-7399, 7401-65535"
CONTROL_PORT=7400

die() { echo "lab.sh: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces and nftables)"
command -v ip >/dev/null || die "needs iproute2 (apt-get install iproute2)"

senders() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${P}tx[0-9]+\$" | sort -V || true; }
mcast_receivers() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${P}mr[0-9]+\$" | sort -V || true; }
MAX_MCAST=20
MCAST_GROUPS=239.255.0.0/16
MCAST_GROUPS6=ff15::/16

# A sender's addresses: lp-txI is 198.18.0.(10+I) and 2001:2::(10+I) (the same digits, read as hex).
addr_of() { echo "198.18.0.$((10 + $1))"; }
addr6_of() { echo "2001:2::$((10 + $1))"; }

# The host namespaces, receiver first: "NAME ADDRESS INDEX ADDRESS6" (INDEX numbers the host's veth pair).
hosts_list() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$RX" || return 0
  echo "$RX $RX_ADDR 0 $RX_ADDR6"
  for ns in $(senders); do
    local i=${ns#"${P}tx"}
    echo "$ns $(addr_of "$i") $i $(addr6_of "$i")"
  done
}

down() {
  for ns in $(mcast_receivers) $(senders) $CTL $NAT $RX $SW; do
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
}

# ip netns exec mounts /etc/netns/NS/hosts over /etc/hosts: in the lab, rx and txI name both of a host's addresses.
# Best effort: where /etc cannot be written the lab works without the names.
name_hosts() { # SENDERS
  local names="$RX_ADDR rx"$'\n'"$RX_ADDR6 rx"$'\n' i ns
  for i in $(seq 1 "$1"); do names+="$(addr_of "$i") tx$i"$'\n'"$(addr6_of "$i") tx$i"$'\n'; done
  for ns in $RX $(senders); do
    { mkdir -p "/etc/netns/$ns" && printf '127.0.0.1 localhost\n::1 localhost\n%s' "$names" \
      > "/etc/netns/$ns/hosts"; } 2>/dev/null || echo "lab.sh: no names in $ns (cannot write /etc/netns)" >&2
  done
}

# A namespace starts with no reserved ports (the sysctl is per namespace): like the host .ci/run sets up, the
# tests' ports stay out of what outgoing connections and unbound sockets take as their local ports.
reserve_ports() { # ns
  ip netns exec "$1" sysctl -q -w net.ipv4.ip_local_reserved_ports=19000-49999 2>/dev/null \
    || echo "lab.sh: cannot reserve ports 19000-49999 in $1" >&2
}

link_host() { # ns addr index addr6
  local ns=$1 addr=$2 i=$3 addr6=$4
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  reserve_ports "$ns"
  ip link add "$VETH$i" netns "$ns" type veth peer name "$PORT$i" netns "$SW"
  ip -n "$ns" link set "$VETH$i" name eth0
  ip -n "$ns" addr add "$addr/24" dev eth0
  # nodad: usable at once (duplicate address detection would hold it back for a second or two).
  ip -n "$ns" addr add "$addr6/64" dev eth0 nodad
  ip -n "$ns" link set eth0 up
  ip -n "$SW" link set "$PORT$i" master "$BR"
  ip -n "$SW" link set "$PORT$i" up
}

up() {
  local n=${1:-2}
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $MAX_SENDERS ] || die "SENDERS must be 1..$MAX_SENDERS"
  down
  ip netns add "$SW"
  ip -n "$SW" link set lo up
  ip -n "$SW" link add "$BR" type bridge
  ip -n "$SW" link set "$BR" up
  # The switch only bridges: no addresses of its own, no router solicitations or MLD reports from its ports.
  ip netns exec "$SW" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  link_host "$RX" "$RX_ADDR" 0 "$RX_ADDR6"
  for i in $(seq 1 "$n"); do
    link_host "${P}tx$i" "$(addr_of "$i")" "$i" "$(addr6_of "$i")"
  done
  name_hosts "$n"
  watch "$n"
  echo "lab up: $RX $RX_ADDR $RX_ADDR6; senders: $(for i in $(seq 1 "$n"); do
    printf '%stx%d %s %s  ' "$P" "$i" "$(addr_of "$i")" "$(addr6_of "$i")"; done)"
}

# The switch's data counters: ingress on every port, so each packet is counted once, on its way in. A netdev chain
# is bound to its devices, so the table is written when the lab is up (after its ports exist) and on each clear.
# The control port is passed on by its own rules: nftables merges "th dport != P th sport != P" into one compare
# of both ports at once, true unless both are P, which counted the control connection as data.
watch() { # SENDERS
  command -v nft >/dev/null || return 0
  local devs="\"${PORT}0\"" i cut=""
  for i in $(seq 1 "$1"); do devs+=", \"$PORT$i\""; done
  if ip -n "$SW" link show "${PORT}n" >/dev/null 2>&1; then devs+=", \"${PORT}n\""; fi
  [ "${2:-}" = cut ] && cut="    tcp dport $CONTROL_PORT counter name \"cut\" drop
    tcp sport $CONTROL_PORT counter name \"cut\" drop"
  ip netns exec "$SW" nft -f - <<NFT
table netdev lossprobe_watch
delete table netdev lossprobe_watch
table netdev lossprobe_watch {
  counter toRx { }
  counter fromRx { }
  counter cut { }
  chain ingress {
    type filter hook ingress devices = { $devs } priority -400; policy accept;
$cut
    tcp dport $CONTROL_PORT accept
    tcp sport $CONTROL_PORT accept
    ip daddr $RX_ADDR meta l4proto { tcp, udp } counter name "toRx"
    ip6 daddr $RX_ADDR6 meta l4proto { tcp, udp } counter name "toRx"
    ip saddr $RX_ADDR meta l4proto { tcp, udp } counter name "fromRx"
    ip6 saddr $RX_ADDR6 meta l4proto { tcp, udp } counter name "fromRx"
  }
}
NFT
}

# A controller behind a NAT, as at home or in an office: lp-ctl on a private subnet, reaching the lab through the
# router lp-nat, which masquerades (rewrites the source to its own switch address 198.18.0.250 and a port of its
# choosing, Linux keeping the source port where it is free) and lets back in only what conntrack maps to a
# connection lp-ctl opened. Its nftables counters: "out" and "in" the packets it forwarded each way, "unmapped"
# the UDP and TCP packets to 198.18.0.250 that no mapping claimed (dropped: a NAT's silent drop).
nat() {
  need_nft
  ip -n "$SW" link show "$BR" >/dev/null 2>&1 || die "lab is not up (lab.sh up first)"
  for ns in $CTL $NAT; do ip netns del "$ns" 2>/dev/null || true; rm -rf "/etc/netns/$ns"; done
  ip -n "$SW" link del "${PORT}n" 2>/dev/null || true
  ip netns add "$NAT"
  ip netns add "$CTL"
  ip -n "$NAT" link set lo up
  ip -n "$CTL" link set lo up
  reserve_ports "$CTL"
  ip netns exec "$NAT" sysctl -q -w net.ipv4.ip_forward=1 net.ipv6.conf.all.disable_ipv6=1 \
    net.ipv6.conf.default.disable_ipv6=1
  ip netns exec "$CTL" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip link add "${VETH}n" netns "$NAT" type veth peer name "${PORT}n" netns "$SW"
  ip -n "$NAT" link set "${VETH}n" name eth0
  ip -n "$NAT" addr add "$NAT_ADDR/24" dev eth0
  ip -n "$NAT" link set eth0 up
  ip -n "$SW" link set "${PORT}n" master "$BR"
  ip -n "$SW" link set "${PORT}n" up
  ip link add "${VETH}c" netns "$CTL" type veth peer name "${VETH}i" netns "$NAT"
  ip -n "$CTL" link set "${VETH}c" name eth0
  ip -n "$NAT" link set "${VETH}i" name eth1
  ip -n "$CTL" addr add "$CTL_ADDR/24" dev eth0
  ip -n "$NAT" addr add "$NAT_INSIDE/24" dev eth1
  ip -n "$CTL" link set eth0 up
  ip -n "$NAT" link set eth1 up
  ip -n "$CTL" route add default via "$NAT_INSIDE"
  ip netns exec "$NAT" nft -f - <<NFT
table ip lossprobe_nat
delete table ip lossprobe_nat
table ip lossprobe_nat {
  counter fwd_out { }
  counter fwd_in { }
  counter unmapped { }
  chain masq {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "eth0" ip saddr 198.18.1.0/24 masquerade
  }
  chain forwarding {
    type filter hook forward priority filter; policy drop;
    iifname "eth1" oifname "eth0" counter name "fwd_out" accept
    iifname "eth0" oifname "eth1" ct state established,related counter name "fwd_in" accept
  }
  chain to_router {
    type filter hook input priority filter; policy accept;
    iifname "eth0" ip daddr $NAT_ADDR meta l4proto { tcp, udp } counter name "unmapped" drop
  }
}
NFT
  mkdir -p "/etc/netns/$CTL" 2>/dev/null \
    && printf '127.0.0.1 localhost\n%s rx\n' "$RX_ADDR" > "/etc/netns/$CTL/hosts" 2>/dev/null || true
  watch "$(lab_size)"
  echo "nat up: $CTL $CTL_ADDR behind $NAT, which masquerades it as $NAT_ADDR"
}

# Drops PCT % of the UDP packets the router forwards in to lp-ctl, before its forwarding rules: the ground truth of
# the loss a controller behind the NAT sees on what the server sends it. Counted as packets and bytes (an IPv4
# packet's bytes from its IP header: a GSO packet of N datagrams counts once, with one 28-byte header).
nat_loss() {
  need_nft
  ip netns exec "$NAT" nft list table ip lossprobe_nat >/dev/null 2>&1 || die "no NAT (lab.sh nat first)"
  local t; t=$(per_10k "$1")
  local pick="numgen random mod 10000 < $t"
  [ "$t" -lt 10000 ] || pick=""
  ip netns exec "$NAT" nft -f - <<NFT
table ip lossprobe_natloss
delete table ip lossprobe_natloss
table ip lossprobe_natloss {
  counter dropped { }
  chain forwarding {
    type filter hook forward priority filter - 10; policy accept;
    iifname "eth0" oifname "eth1" meta l4proto udp $pick counter name "dropped" drop
  }
}
NFT
  echo "dropping $1 % of the UDP packets $NAT forwards in to $CTL"
}

nat_counters() {
  ip netns exec "$NAT" nft list table ip lossprobe_nat >/dev/null 2>&1 || return 0
  printf ',"nat":{"out":%d,"in":%d,"unmapped":{"packets":%d,"bytes":%d},"dropped":{"packets":%d,"bytes":%d}}' \
    "$(counter_of "$NAT" ip fwd_out packets nat)" "$(counter_of "$NAT" ip fwd_in packets nat)" \
    "$(counter_of "$NAT" ip unmapped packets nat)" "$(counter_of "$NAT" ip unmapped bytes nat)" \
    "$(counter_of "$NAT" ip dropped packets natloss)" "$(counter_of "$NAT" ip dropped bytes natloss)"
}

lab_size() { senders | wc -l; }

# Multicast receivers: lp-mrI at 198.18.0.(100+I) and 2001:2::(100+I), veth pair index 100+I on the switch. The
# switch floods multicast (snooping off: a bridge that snoops forwards a group only to ports it heard a report from,
# and with no querier on the lab forgets them after the membership interval), so every receiver's link carries the
# group and only its joined sockets take it. Every lab host routes the test groups out of its eth0: a sender needs
# a route to the group (TTL 1 keeps it on the switch), as a host's default route would give it.
mcast() { # N
  local n=$1 i ns
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $MAX_MCAST ] || die "N must be 1..$MAX_MCAST"
  ip -n "$SW" link show "$BR" >/dev/null 2>&1 || die "lab is not up (lab.sh up first)"
  for ns in $(mcast_receivers); do ip netns del "$ns" 2>/dev/null || true; rm -rf "/etc/netns/$ns"; done
  ip -n "$SW" link set "$BR" type bridge mcast_snooping 0
  for i in $(seq 1 "$n"); do
    link_host "${P}mr$i" "198.18.0.$((100 + i))" "$((100 + i))" "2001:2::$((100 + i))"
  done
  for ns in $RX $(senders) $(mcast_receivers); do
    ip -n "$ns" route replace "$MCAST_GROUPS" dev eth0
    ip -6 -n "$ns" route replace "$MCAST_GROUPS6" dev eth0
    ip -n "$ns" neigh flush all # a receiver made again has a new MAC: no host may keep sending to the old one
  done
  for ns in $(mcast_receivers); do mcast_table "$ns"; done
  watch "$(lab_size)"
  echo "multicast up: $(for ns in $(mcast_receivers); do printf '%s %s  ' "$ns" "$(mcast_addr_of "$ns")"; done)"
}

mcast_addr_of() { echo "198.18.0.$((100 + ${1#"${P}mr"}))"; }

mcast_table() { # NS [PICK] [aeron]: the receiver's ingress counters, first dropping what PICK picks (all: every
  # packet); with aeron only Aeron data datagrams (the first frame a DATA frame, type 1, of non-zero length) are
  # dropped, never heartbeats, SETUPs or padding. "aeronData" counts the Aeron data datagrams that arrived for a
  # group, "mdcData" those that arrived for the receiver's own address (multi-destination-cast's unicast copies).
  local drop="" pick=${2:-} only=""
  local data='@th,112,16 0x0100 @th,64,32 != 0'
  [ "$pick" = all ] && pick=""
  [ "${3:-}" = aeron ] && only=$data
  [ -n "${2:-}" ] && drop="    ip daddr $MCAST_GROUPS udp dport { $PORTS } $only $pick counter name \"dropped\" drop
    ip6 daddr $MCAST_GROUPS6 udp dport { $PORTS } $only $pick counter name \"dropped\" drop"
  # aeron-mdc: the Aeron data datagrams to the host's own address instead (multi-destination-cast's copies).
  [ -n "${2:-}" ] && [ "${3:-}" = aeron-mdc ] && drop="    ip daddr $(mcast_addr_of "$1") udp dport { $PORTS } $data \
$pick counter name \"dropped\" drop"
  ip netns exec "$1" nft -f - <<NFT
table netdev lossprobe_mcast
delete table netdev lossprobe_mcast
table netdev lossprobe_mcast {
  counter dropped { }
  counter arrived { }
  counter aeronData { }
  counter mdcData { }
  chain ingress {
    type filter hook ingress device "eth0" priority -500; policy accept;
$drop
    ip daddr $MCAST_GROUPS udp dport { $PORTS } counter name "arrived"
    ip6 daddr $MCAST_GROUPS6 udp dport { $PORTS } counter name "arrived"
    ip daddr $MCAST_GROUPS udp dport { $PORTS } $data counter name "aeronData"
    ip daddr $(mcast_addr_of "$1") udp dport { $PORTS } $data counter name "mdcData"
  }
}
NFT
}

mcast_loss() { # HOST PCT [aeron]
  need_nft
  local host=$1 t
  t=$(per_10k "$2")
  mcast_receivers | grep -qx "$host" || die "no multicast receiver $host (receivers: $(mcast_receivers | tr '\n' ' '))"
  [ -z "${3:-}" ] || [ "$3" = aeron ] || [ "$3" = aeron-mdc ] || die "the third argument can only be 'aeron' or 'aeron-mdc'"
  local pick="numgen random mod 10000 < $t"
  [ "$t" -lt 10000 ] || pick=all # 100 %: every packet (numgen's values stop at 9999)
  mcast_table "$host" "$pick" "${3:-}"
  case "${3:-}" in
    aeron-mdc) echo "dropping $2 % of the Aeron data datagrams to $host's own address (multi-destination-cast)" ;;
    *) echo "dropping $2 % of the multicast UDP${3:+ (Aeron data datagrams only)} arriving at $host" ;;
  esac
}

# The switch port into multicast receiver HOST as shape's classes: the group's UDP (239.255.0.0/16) through a tbf of
# RATE, everything else (the control connection, status messages) unshaped. "shaped" under the host in "mcast".
mcast_shape() { # HOST RATE [LATENCY] [BURST]
  local host=$1 latency=${3:-50ms} burst=${4:-64kb}
  mcast_receivers | grep -qx "$host" || die "no multicast receiver $host (receivers: $(mcast_receivers | tr '\n' ' '))"
  local SHAPE_DEV=${PORT}$((100 + ${host#"${P}mr"}))
  shaper "$2" "$latency" "$burst"
  # All UDP into the host: the group's datagrams and Aeron multi-destination-cast's unicast copies alike.
  data_filter ip 3 match ip protocol 17 0xff
  data_filter ipv6 4 match ip6 protocol 17 0xff
  echo "shaped the UDP into $host to $2 (tbf latency $latency, burst $burst)"
}

mcast_loss_every() { # HOST N PHASE
  need_nft
  local host=$1 n=$2 phase=$3
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 1000000 ] || die "N must be 2..1000000"
  [[ "$phase" =~ ^[0-9]+$ ]] && [ "$phase" -lt "$n" ] || die "PHASE must be 0..N-1"
  mcast_receivers | grep -qx "$host" || die "no multicast receiver $host (receivers: $(mcast_receivers | tr '\n' ' '))"
  mcast_table "$host" "numgen inc mod $n == $phase"
  echo "dropping every ${n}th packet of the multicast UDP arriving at $host, from the ${phase}th"
}

# Loss before the fan-out: on the switch's port of sender HOST, ingress, so what is dropped there never reaches the
# bridge, which floods the rest to every receiver. One rule, one counter: the loss every receiver shares.
mcast_loss_sender() { # PCT [HOST]
  need_nft
  local host=${2:-${P}tx1} t i
  t=$(per_10k "$1")
  senders | grep -qx "$host" || die "no sender $host (senders: $(senders | tr '\n' ' '))"
  [ -n "$(mcast_receivers)" ] || die "no multicast receivers (lab.sh mcast N first)"
  i=${host#"${P}tx"}
  local pick="numgen random mod 10000 < $t"
  [ "$t" -lt 10000 ] || pick="" # 100 %: every packet (numgen's values stop at 9999)
  ip netns exec "$SW" nft -f - <<NFT
table netdev lossprobe_mcastsrc
delete table netdev lossprobe_mcastsrc
table netdev lossprobe_mcastsrc {
  counter dropped { }
  chain ingress {
    type filter hook ingress device "$PORT$i" priority -500; policy accept;
    ip daddr $MCAST_GROUPS udp dport { $PORTS } $pick counter name "dropped" drop
  }
}
NFT
  echo "dropping $1 % of the multicast UDP from $host before the switch floods it"
}

# "mcast":{"lp-mr1":{"arrived":{"packets":N,"bytes":B},"dropped":{...}},...,"sender":{"dropped":{...}}}: packets
# and bytes as nftables saw them at each receiver's eth0 ingress (a GSO packet counted once, its bytes whole: see
# counters), and what mcast-loss-sender dropped before the fan-out (zero without it).
mcast_counters() {
  local ns d
  [ -n "$(mcast_receivers)" ] || return 0
  printf ',"mcast":{'
  for ns in $(mcast_receivers); do
    printf '"%s":{"arrived":{"packets":%d,"bytes":%d},"dropped":{"packets":%d,"bytes":%d}' "$ns" \
      "$(counter_of "$ns" netdev arrived packets mcast)" "$(counter_of "$ns" netdev arrived bytes mcast)" \
      "$(counter_of "$ns" netdev dropped packets mcast)" "$(counter_of "$ns" netdev dropped bytes mcast)"
    printf ',"aeronData":{"packets":%d,"bytes":%d}' \
      "$(counter_of "$ns" netdev aeronData packets mcast)" "$(counter_of "$ns" netdev aeronData bytes mcast)"
    printf ',"mdcData":{"packets":%d,"bytes":%d}' \
      "$(counter_of "$ns" netdev mdcData packets mcast)" "$(counter_of "$ns" netdev mdcData bytes mcast)"
    local shaped; shaped=$(shaped_of "${PORT}$((100 + ${ns#"${P}mr"}))")
    if [ -n "$shaped" ]; then
      set -- $shaped
      printf ',"shaped":{"packets":%d,"bytes":%d,"drops":%d}' "${1:-0}" "${2:-0}" "${3:-0}"
    fi
    printf '},'
  done
  d=$(counter_of "$SW" netdev dropped packets mcastsrc)
  printf '"sender":{"dropped":{"packets":%d,"bytes":%d}}}' "${d:-0}" \
    "$(counter_of "$SW" netdev dropped bytes mcastsrc || true)"
}

cut_control() {
  need_nft
  ip -n "$SW" link show "${PORT}0" >/dev/null 2>&1 || die "lab is not up"
  local before; before=$(data)
  watch "$(lab_size)" cut
  echo "control connection to $RX:$CONTROL_PORT cut at the switch, both ways (data so far: $before)"
}

data() { # -> "TO_RX FROM_RX" packets
  ip netns exec "$SW" nft list table netdev lossprobe_watch 2>/dev/null | awk '
    /counter toRx/ { on = "to" } /counter fromRx/ { on = "from" } /counter cut/ { on = "" }
    on != "" && /packets/ { for (i = 1; i <= NF; i++) if ($i == "packets") v[on] = $(i + 1); on = "" }
    END { printf "%d %d\n", v["to"], v["from"] }'
}

need_nft() { command -v nft >/dev/null || die "needs nftables (apt-get install nftables)"; }

per_10k() { # PCT -> integer threshold out of 10000
  awk -v p="$1" 'BEGIN { if (p !~ /^[0-9]+(\.[0-9]+)?$/ || p > 100) exit 1; printf "%d", p * 100 + 0.5 }' \
    || die "PCT must be a number from 0 to 100"
}

loss() {
  need_nft
  local t; t=$(per_10k "$1")
  local proto=${2:-udp}
  [ "$proto" = udp ] || [ "$proto" = tcp ] || die "PROTO must be udp or tcp"
  local pick="numgen random mod 10000 < $t"
  [ "$t" -lt 10000 ] || pick="" # 100 %: every packet (numgen's values stop at 9999)
  ip netns exec "$RX" nft -f - <<NFT
table netdev lossprobe_lab
delete table netdev lossprobe_lab
table netdev lossprobe_lab {
  chain ingress {
    type filter hook ingress device "eth0" priority -500; policy accept;
    ip daddr $RX_ADDR $proto dport { $PORTS } $pick counter name "dropped" drop
    ip6 daddr $RX_ADDR6 $proto dport { $PORTS } $pick counter name "dropped" drop
  }
  counter dropped { }
}
NFT
  echo "dropping $1 % of $proto packets arriving at $RX"
}

blackout() {
  local ms=$1 proto=${2:-udp}
  [[ "$ms" =~ ^[0-9]+$ ]] && [ "$ms" -ge 1 ] && [ "$ms" -le 60000 ] || die "MS must be 1 to 60000"
  loss 100 "$proto" >/dev/null
  sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
  # The rules go, the table and its named counter stay: "dropped" keeps what the blackout dropped.
  ip netns exec "$RX" nft flush chain netdev lossprobe_lab ingress
  echo "dropped every $proto packet arriving at $RX for $ms ms"
}

dup() {
  need_nft
  local t family addr; t=$(per_10k "$1")
  # One table per family: nftables (1.0.6) has no dup in an inet table.
  for ns in $(senders); do
    for family in ip ip6; do
      addr=$RX_ADDR
      [ $family = ip6 ] && addr=$RX_ADDR6
      ip netns exec "$ns" nft -f - <<NFT
table $family lossprobe_lab
delete table $family lossprobe_lab
table $family lossprobe_lab {
  counter duplicated { }
  chain out {
    type filter hook output priority 0; policy accept;
    $family daddr $addr udp dport { $PORTS } numgen random mod 10000 < $t counter name "duplicated" dup to $addr device "eth0"
  }
}
NFT
    done
  done
  echo "duplicating $1 % of UDP packets each sender sends to $RX"
}

# The data into lp-rx (UDP and TCP over IPv4 or IPv6, the control connection to port 7400 excepted) goes through a
# tbf of RATE; everything else (the control connection, ARP, ICMP, neighbour discovery) through a class of its own,
# unshaped, so a full tbf
# never drops a control segment and the tbf's counters ("shaped" in counters) count data alone.
# htb is only the classifier here (its classes run at 10gbit); prio is not built into every kernel the lab runs on.
# tbf counts a packet's length from its Ethernet header: a UDP datagram of P payload bytes is P + 42 bytes to it.
dscp_number() { # CLASS (a dscp_name) -> 0-63
  case "$1" in
    ef) echo 46 ;;
    cs?) echo $(( 8 * ${1#cs} )) ;;
    af??) local x=${1#af}; echo $(( 8 * ${x:0:1} + 2 * ${x:1:1} )) ;;
    *) echo "$1" ;;
  esac
}

# The switch port into lp-rx as two htb classes: 1:10 unshaped (the control connection, and whatever no filter
# picks), 1:20 for the data the caller's filters pick (added after this, at prio 3 and up), with a tbf of RATE.
shaper() { # RATE LATENCY BURST (on SHAPE_DEV, default the switch port into lp-rx)
  local dev=${SHAPE_DEV:-${PORT}0}
  ip -n "$SW" link show "$dev" >/dev/null 2>&1 || die "lab is not up"
  tc -n "$SW" qdisc del dev "$dev" root 2>/dev/null || true
  tc -n "$SW" qdisc add dev "$dev" root handle 1: htb default 10 r2q 100000 \
    && tc -n "$SW" class add dev "$dev" parent 1: classid 1:10 htb rate 10gbit \
    && tc -n "$SW" class add dev "$dev" parent 1: classid 1:20 htb rate 10gbit \
    && tc -n "$SW" qdisc add dev "$dev" parent 1:10 handle 10: pfifo limit 1000 \
    && tc -n "$SW" filter add dev "$dev" parent 1: protocol ip prio 1 u32 match ip dport $CONTROL_PORT 0xffff \
      flowid 1:10 \
    && tc -n "$SW" filter add dev "$dev" parent 1: protocol ipv6 prio 2 u32 match ip6 dport $CONTROL_PORT 0xffff \
      flowid 1:10 \
    || die "tc could not build the classes (needs htb and u32)"
  tc -n "$SW" qdisc add dev "$dev" parent 1:20 handle 20: tbf rate "$1" burst "$3" latency "$2" \
    || die "tc refused RATE '$1', LATENCY '$2' or BURST '$3' (e.g. 20mbit 5ms 4kb)"
}

data_filter() { # PROTOCOL PRIO MATCH...: the data MATCH picks goes through the tbf (class 1:20)
  local protocol=$1 prio=$2; shift 2
  tc -n "$SW" filter add dev "${SHAPE_DEV:-${PORT}0}" parent 1: protocol "$protocol" prio "$prio" u32 "$@" flowid 1:20 \
    || die "tc could not add the data filter ($protocol $*)"
}

# The priority queue of a QoS network in miniature: only CLASS's data goes through a tbf of RATE (its band), every
# other class and the control connection pass unshaped; the tbf's counters are "shaped", as with shape.
shape_class() { # CLASS RATE [LATENCY] [BURST]
  local c tos latency=${3:-50ms} burst=${4:-64kb}
  c=$(dscp_name "$1"); tos=$(printf '0x%02x' $(( $(dscp_number "$c") << 2 )))
  shaper "$2" "$latency" "$burst"
  data_filter ip 3 match ip tos "$tos" 0xfc
  data_filter ipv6 4 match ip6 priority "$tos" 0xfc
  echo "shaped the $c data into $RX to $2 (tbf latency $latency, burst $burst); every other class unshaped"
}

shape() { # RATE [LATENCY] [BURST]
  local latency=${2:-50ms} burst=${3:-64kb}
  shaper "$1" "$latency" "$burst"
  data_filter ip 3 match ip protocol 17 0xff
  data_filter ip 4 match ip protocol 6 0xff
  data_filter ipv6 5 match ip6 protocol 17 0xff
  data_filter ipv6 6 match ip6 protocol 6 0xff
  echo "shaped the data into $RX to $1 (tbf latency $latency, burst $burst)"
}

shaped_of() { # [DEV] -> "packets bytes drops" of the data tbf into lp-rx (or DEV; nothing when not shaped)
  tc -n "$SW" -s qdisc show dev "${1:-${PORT}0}" 2>/dev/null | awk '
    /^qdisc tbf 20:/ { on = 1; next }
    /^qdisc/ { on = 0 }
    on && /Sent/ { for (i = 1; i <= NF; i++) { if ($i == "Sent") b = $(i + 1); if ($i == "pkt") p = $(i - 1);
      if ($i == "(dropped") { d = $(i + 1); sub(",", "", d) } } print p, b, d; exit }' || true
}

# tbf drops at enqueue when its queue (rate x latency + burst bytes) is full and returns NET_XMIT_DROP, which the
# sending socket sees as ENOBUFS (with IP_RECVERR) or only as Udp SndbufErrors (without): a tail drop on the
# sender's own host, like a shaper's or a full txqueuelen's (pfifo). (fq_codel, whose overflow the socket never
# hears of, is not built into every kernel the lab runs on.) burst 64kb keeps every UDP GSO super-packet (at most
# 64 x 1500 bytes) below tbf's max_size, so tbf never segments one and drops it whole.
shape_tx() { # RATE [HOST]
  local ns=${2:-${P}tx1}
  [[ "$ns" =~ ^${P}tx[0-9]+$ ]] || die "HOST must be a sender (${P}tx1, ${P}tx2, ...)"
  ip -n "$ns" link show eth0 >/dev/null 2>&1 || die "no sender $ns (is the lab up?)"
  tc -n "$ns" qdisc replace dev eth0 root tbf rate "$1" burst 64kb latency 50ms \
    || die "tc refused RATE '$1' (e.g. 20mbit)"
  echo "shaped $ns's egress to $1"
}

# Loss on one host's link, both directions, with a counter per peer so each pair's drops are known: packets into
# HOST are dropped on HOST's eth0 ingress, packets out of HOST on its switch port's ingress, so neither host's
# sockets nor its qdisc ever see the drop (pure path loss). The control port is spared in both directions.
link_loss() { # HOST PCT [PROTO]
  need_nft
  local host=$1 t proto=${3:-udp} addr="" addr6="" index="" rules_in="" rules_out="" counters_in="" counters_out=""
  local ip match pct=$2
  t=$(per_10k "$2")
  [ "$proto" = udp ] || [ "$proto" = tcp ] || die "PROTO must be udp or tcp"
  while read -r ns a i a6; do
    if [ "$ns" = "$host" ]; then addr=$a; addr6=$a6; index=$i; fi
  done < <(hosts_list)
  [ -n "$addr" ] || die "no host $host in the lab (hosts: $(hosts_list | awk '{printf "%s ", $1}'))"
  match="$proto sport != $CONTROL_PORT $proto dport { $PORTS } numgen random mod 10000 < $t"
  while read -r ns a i a6; do
    [ "$ns" = "$host" ] && continue
    local tag=${ns#"$P"}
    counters_in+="  counter in_$tag { }"$'\n'
    counters_out+="  counter out_$tag { }"$'\n'
    for ip in "ip $a $addr" "ip6 $a6 $addr6"; do
      set -- $ip
      rules_in+="    $1 saddr $2 $1 daddr $3 $match counter name \"in_$tag\" drop"$'\n'
      rules_out+="    $1 saddr $3 $1 daddr $2 $match counter name \"out_$tag\" drop"$'\n'
    done
  done < <(hosts_list)
  ip netns exec "$host" nft -f - <<NFT
table netdev lossprobe_link
delete table netdev lossprobe_link
table netdev lossprobe_link {
$counters_in
  chain ingress {
    type filter hook ingress device "eth0" priority -500; policy accept;
$rules_in  }
}
NFT
  ip netns exec "$SW" nft -f - <<NFT
table netdev lossprobe_link
delete table netdev lossprobe_link
table netdev lossprobe_link {
$counters_out
  chain ingress {
    type filter hook ingress device "$PORT$index" priority -500; policy accept;
$rules_out  }
}
NFT
  echo "dropping $pct % of $proto packets on $host's link, both directions"
}

# With link-loss on: {"host": H, "in": {PEER: {"packets": N, "bytes": B}, ...}, "out": {...}}; "in" is what was
# dropped on its way from PEER into H, "out" on its way from H to PEER.
link_counters() {
  local host="" first=1
  for ns in $(hosts_list | awk '{print $1}'); do
    if ip netns exec "$ns" nft list table netdev lossprobe_link >/dev/null 2>&1; then host=$ns; fi
  done
  [ -n "$host" ] || return 0
  printf ',"link":{"host":"%s"' "$host"
  for dir in in out; do
    local where=$host
    [ "$dir" = out ] && where=$SW
    printf ',"%s":{' "$dir"
    first=1
    for ns in $(hosts_list | awk '{print $1}'); do
      [ "$ns" = "$host" ] && continue
      local tag=${ns#"$P"} p b
      p=$(counter_of "$where" netdev "${dir}_$tag" packets link); b=$(counter_of "$where" netdev "${dir}_$tag" bytes link)
      [ $first = 1 ] || printf ','
      first=0
      printf '"%s":{"packets":%d,"bytes":%d}' "$ns" "${p:-0}" "${b:-0}"
    done
    printf '}'
  done
  printf '}'
}

dscp_name() { # CLASS -> the lower-case name nftables and the counters use, or exit 2
  local c; c=$(echo "$1" | tr 'A-Z' 'a-z')
  [[ "$c" =~ ^(ef|cs[0-7]|af[1-4][1-3]|[0-9]|[1-5][0-9]|6[0-3])$ ]] \
    || die "CLASS must be ef, cs0-cs7, af11-af43 or 0-63, not '$1'"
  echo "$c"
}

# What arrives at lp-rx per traffic class, after the loss chain (priority -500: its drops never reach here), UDP and
# TCP data only (the control port excepted). A GSO packet is counted once, its bytes whole (see counters).
count_dscp() { # CLASS...
  need_nft
  local rules="" back="" decl="" c
  for c in "$@"; do
    c=$(dscp_name "$c")
    decl+="  counter dscp_$c { }"$'\n'
    back+="    ip saddr $RX_ADDR meta l4proto { tcp, udp } th sport != $CONTROL_PORT ip dscp $c counter name \"dscp_$c\""$'\n'
    back+="    ip6 saddr $RX_ADDR6 meta l4proto { tcp, udp } th sport != $CONTROL_PORT ip6 dscp $c counter name \"dscp_$c\""$'\n'
    # One negation per rule: nft (1.0.6) merges "th dport != 7400 th sport != 7400" into one 4-byte compare of
    # both ports, true unless both are 7400, so that pair lets the control connection's segments through (seen
    # with --debug=netlink). To lp-rx only the destination port can be the control port.
    rules+="    ip daddr $RX_ADDR meta l4proto { tcp, udp } th dport != $CONTROL_PORT ip dscp $c counter name \"dscp_$c\""$'\n'
    rules+="    ip6 daddr $RX_ADDR6 meta l4proto { tcp, udp } th dport != $CONTROL_PORT ip6 dscp $c counter name \"dscp_$c\""$'\n'
  done
  ip netns exec "$RX" nft -f - <<NFT
table netdev lossprobe_dscp
delete table netdev lossprobe_dscp
table netdev lossprobe_dscp {
$decl
  chain ingress {
    type filter hook ingress device "eth0" priority -450; policy accept;
$rules  }
}
NFT
  ip netns exec "$SW" nft -f - <<NFT
table netdev lossprobe_dscp
delete table netdev lossprobe_dscp
table netdev lossprobe_dscp {
$decl
  chain ingress {
    type filter hook ingress device "${PORT}0" priority -450; policy accept;
$back  }
}
NFT
  echo "counting the data arriving at $RX, and leaving it, per class: $*"
}

# The switch re-marks, on HOST's port, the data to lp-rx that carries FROM: a router that bleaches or rewrites DSCP.
remark() { # FROM TO [HOST]
  need_nft
  local from to ns=${3:-${P}tx1} index
  from=$(dscp_name "$1"); to=$(dscp_name "$2")
  [[ "$ns" =~ ^${P}tx([0-9]+)$ ]] || die "HOST must be a sender (${P}tx1, ${P}tx2, ...)"
  index=${BASH_REMATCH[1]}
  ip -n "$SW" link show "$PORT$index" >/dev/null 2>&1 || die "no sender $ns (is the lab up?)"
  ip netns exec "$SW" nft -f - <<NFT
table netdev lossprobe_remark
delete table netdev lossprobe_remark
table netdev lossprobe_remark {
  counter remarked { }
  chain ingress {
    type filter hook ingress device "$PORT$index" priority -450; policy accept;
    ip daddr $RX_ADDR meta l4proto { tcp, udp } th dport != $CONTROL_PORT ip dscp $from counter name "remarked" ip dscp set $to
    ip6 daddr $RX_ADDR6 meta l4proto { tcp, udp } th dport != $CONTROL_PORT ip6 dscp $from counter name "remarked" ip6 dscp set $to
  }
}
NFT
  echo "re-marking $from as $to on the data from $ns to $RX"
}

# With count-dscp: "dscp":{"ef":{"packets":N,"bytes":B},...} for the data into lp-rx, "dscpFromRx" for the data
# out of it (echo replies, TCP's ACKs, a --reverse run's data), counted at the switch; with remark:
# "remarked":{"packets":N,"bytes":B}.
dscp_counters() {
  local list key ns
  for key in dscp dscpFromRx; do
    ns=$RX
    [ "$key" = dscpFromRx ] && ns=$SW
    list=$(ip netns exec "$ns" nft list counters table netdev lossprobe_dscp 2>/dev/null || true)
    [ -n "$list" ] || continue
    printf ',"%s":{%s}' "$key" "$(echo "$list" | awk '
      /counter dscp_/ { name = $2; sub("dscp_", "", name) }
      /packets/ && name != "" { printf "%s\"%s\":{\"packets\":%d,\"bytes\":%d}", sep, name, $2, $4; sep = ","; name = "" }')"
  done
  if ip netns exec "$SW" nft list table netdev lossprobe_remark >/dev/null 2>&1; then
    printf ',"remarked":{"packets":%d,"bytes":%d}' "$(counter_of "$SW" netdev remarked packets remark)" \
      "$(counter_of "$SW" netdev remarked bytes remark)"
  fi
}

# A counter's value; nothing when there is no such table or counter (nft: "Error: No such file or directory").
# Any other failure (the namespace gone, ip netns exec failing while other labs churn beside this one) is tried
# again, then ends lab.sh, which prints no JSON: a counter never reads as 0 because it could not be read.
counter_of() { # ns family counter field(packets|bytes) [table suffix] -> value
  local out try
  for try in 1 2 3 4 5; do
    if out=$(ip netns exec "$1" nft list counter "$2" "lossprobe_${5:-lab}" "$3" 2>&1); then
      awk -v f="$4" '/packets/ { for (i = 1; i <= NF; i++) if ($i == f) print $(i + 1) }' <<<"$out" | head -1
      return 0
    fi
    case $out in "Error: No such file or directory"*) return 0 ;; esac
    sleep 0.2
  done
  echo "lab.sh: cannot read counter $3 of $2 lossprobe_${5:-lab} in $1: $out" >&2
  kill -TERM $$
}

egress_drops_of() { # ns -> packets eth0's root qdisc dropped (a GSO super-packet dropped whole counts once)
  tc -n "$1" -s qdisc show dev eth0 root 2>/dev/null \
    | awk '/dropped/ { for (i = 1; i <= NF; i++) if ($i == "(dropped") { sub(",", "", $(i + 1)); print $(i + 1) } }' \
    | head -1 || true
}

snmp_of() { # ns section field -> value from the namespace's /proc/net/snmp
  ip netns exec "$1" awk -v s="$2:" -v f="$3" \
    '$1 == s && !h { for (i = 2; i <= NF; i++) c[$i] = i; h = 1; next } $1 == s && h { print $(c[f]); exit }' \
    /proc/net/snmp 2>/dev/null || true
}

# Packets are what nftables saw. With UDP GSO a packet can carry several datagrams (a veth keeps the super-packet
# whole), so the bytes are printed too: at these hooks a packet's bytes are its IP and UDP headers (28 over IPv4,
# 48 over IPv6) plus its datagrams' payloads, so datagrams = (bytes - 28 x packets) / payload size (48 for IPv6). egressDrops counts packets too, and
# restarts from 0 with the qdisc (shape-tx, clear); sndbufErrors and outDiscards are the senders' kernel counters,
# which never restart: compare two readings.
counters() {
  local dropped dropped_bytes duplicated=0 duplicated_bytes=0 egress=0 sndbuf=0 discards=0 d family
  dropped=$(counter_of "$RX" netdev dropped packets); dropped=${dropped:-0}
  dropped_bytes=$(counter_of "$RX" netdev dropped bytes); dropped_bytes=${dropped_bytes:-0}
  for ns in $(senders); do
    for family in ip ip6; do
      d=$(counter_of "$ns" $family duplicated packets); duplicated=$((duplicated + ${d:-0}))
      d=$(counter_of "$ns" $family duplicated bytes); duplicated_bytes=$((duplicated_bytes + ${d:-0}))
    done
    d=$(egress_drops_of "$ns"); egress=$((egress + ${d:-0}))
    d=$(snmp_of "$ns" Udp SndbufErrors); sndbuf=$((sndbuf + ${d:-0}))
    d=$(snmp_of "$ns" Ip OutDiscards); discards=$((discards + ${d:-0}))
  done
  printf '{"dropped":%d,"droppedBytes":%d,"duplicated":%d,"duplicatedBytes":%d,' \
    "$dropped" "$dropped_bytes" "$duplicated" "$duplicated_bytes"
  printf '"egressDrops":%d,"sndbufErrors":%d,"outDiscards":%d' "$egress" "$sndbuf" "$discards"
  local shaped; shaped=$(shaped_of)
  if [ -n "$shaped" ]; then
    set -- $shaped
    printf ',"shaped":{"packets":%d,"bytes":%d,"drops":%d}' "${1:-0}" "${2:-0}" "${3:-0}"
  fi
  link_counters
  dscp_counters
  nat_counters
  mcast_counters
  local to from cut
  read -r to from < <(data)
  cut=$(counter_of "$SW" netdev cut packets watch)
  printf ',"data":{"toRx":%d,"fromRx":%d},"cut":%d' "${to:-0}" "${from:-0}" "${cut:-0}"
  printf '}\n'
}

clear_all() {
  ip netns exec "$RX" nft delete table netdev lossprobe_lab 2>/dev/null || true
  ip netns exec "$RX" nft delete table netdev lossprobe_dscp 2>/dev/null || true
  ip netns exec "$SW" nft delete table netdev lossprobe_remark 2>/dev/null || true
  ip netns exec "$SW" nft delete table netdev lossprobe_dscp 2>/dev/null || true
  for ns in $(senders); do
    for family in ip ip6; do ip netns exec "$ns" nft delete table $family lossprobe_lab 2>/dev/null || true; done
  done
  tc -n "$SW" qdisc del dev "${PORT}0" root 2>/dev/null || true
  for ns in $(senders); do tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true; done
  for ns in $(hosts_list | awk '{print $1}') $SW; do
    ip netns exec "$ns" nft delete table netdev lossprobe_link 2>/dev/null || true
  done
  ip netns exec "$NAT" nft reset counters table ip lossprobe_nat >/dev/null 2>&1 || true
  ip netns exec "$NAT" nft delete table ip lossprobe_natloss 2>/dev/null || true
  for ns in $(mcast_receivers); do
    mcast_table "$ns"
    tc -n "$SW" qdisc del dev "${PORT}$((100 + ${ns#"${P}mr"}))" root 2>/dev/null || true
  done
  ip netns exec "$SW" nft delete table netdev lossprobe_mcastsrc 2>/dev/null || true
  watch "$(lab_size)"
  echo "lab clear"
}

cmd=${1:-}; shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down; echo "lab down" ;;
  loss) [ $# -ge 1 ] || die "usage: lab.sh loss PCT [udp|tcp]"; loss "$@" ;;
  blackout) [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: lab.sh blackout MS [udp|tcp]"; blackout "$@" ;;
  dup) [ $# -eq 1 ] || die "usage: lab.sh dup PCT"; dup "$1" ;;
  shape) [ $# -ge 1 ] && [ $# -le 3 ] || die "usage: lab.sh shape RATE [LATENCY] [BURST]"; shape "$@" ;;
  shape-class) [ $# -ge 2 ] && [ $# -le 4 ] || die "usage: lab.sh shape-class CLASS RATE [LATENCY] [BURST]"
    shape_class "$@" ;;
  shape-tx) [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: lab.sh shape-tx RATE [HOST]"; shape_tx "$@" ;;
  link-loss) [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: lab.sh link-loss HOST PCT [udp|tcp]"; link_loss "$@" ;;
  count-dscp) [ $# -ge 1 ] || die "usage: lab.sh count-dscp CLASS..."; count_dscp "$@" ;;
  remark) [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: lab.sh remark FROM TO [HOST]"; remark "$@" ;;
  counters) counters ;;
  nat) [ $# -eq 0 ] || die "usage: lab.sh nat"; nat ;;
  nat-loss) [ $# -eq 1 ] || die "usage: lab.sh nat-loss PCT"; nat_loss "$1" ;;
  cut-control) [ $# -eq 0 ] || die "usage: lab.sh cut-control"; cut_control ;;
  mcast) [ $# -eq 1 ] || die "usage: lab.sh mcast N"; mcast "$1" ;;
  mcast-loss) [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: lab.sh mcast-loss HOST PCT [aeron|aeron-mdc]"
    mcast_loss "$@" ;;
  mcast-loss-every) [ $# -eq 3 ] || die "usage: lab.sh mcast-loss-every HOST N PHASE"; mcast_loss_every "$@" ;;
  mcast-loss-sender) [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: lab.sh mcast-loss-sender PCT [HOST]"
    mcast_loss_sender "$@" ;;
  mcast-shape) [ $# -ge 2 ] && [ $# -le 4 ] || die "usage: lab.sh mcast-shape HOST RATE [LATENCY] [BURST]"
    mcast_shape "$@" ;;
  mcast-hosts) for ns in $(mcast_receivers); do echo "$ns $(mcast_addr_of "$ns")"; done ;;
  data) data ;;
  hosts) case "${1:-}" in
      "") hosts_list | awk '{print $1, $2}' ;;
      -6) hosts_list | awk '{print $1, $4}' ;;
      *) die "usage: lab.sh hosts [-6]" ;;
    esac ;;
  clear) clear_all ;;
  exec) [ $# -ge 2 ] || die "usage: lab.sh exec HOST CMD..."; ns=$1; shift; exec ip netns exec "$ns" "$@" ;;
  *) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; [ -z "$cmd" ] || exit 2 ;;
esac

#!/usr/bin/env python3
"""Side-by-side benchmark: lossprobe against sockperf, iperf3 and Aeron's EmbeddedThroughput (throughput), and
against irtt and sockperf's ping-pong (round trips; --only latency).

Run through scripts/bench/run.sh, which installs the tools first. Every pair runs back to back in one run, on
127.0.0.1 only, every process bounded by a timeout; each line prints lossprobe's figure, the reference's figure
and their ratio, and a JSON record of all of it is written at the end. A transport lossprobe does not have yet is
skipped with a line saying so, never given a figure.

Lossprobe runs at the `max` level (send as fast as the transport accepts, full accounting on) and reports
delivered = distinct messages received / measured window; the identities received + lost == sent and
sent + sendFailed + behind == scheduled are checked on every lossprobe result. For UDP a second lossprobe run
holds a fixed level equal to the rate sockperf sent in this run: "can lossprobe carry what sockperf sends".

The latency section (--only latency) alternates, in every round, irtt (client and server, one packet per ms),
lossprobe's echo at 1k/s over one flow in the default and the precision timing mode, and sockperf's ping-pong
(at 1,000 messages/s, and back to back); each gives its round trip's p50 and p99 from its own per-packet figures.
The targets compare like with like: the peers time a round trip from their actual send, so lossprobe's figure there
is its round trip from the actual send (echo.rttTransit); its rtt from the intended send time, which adds the
sender's lag behind its schedule, is printed beside it as information. Then lossprobe's one-way delay at 30k/s over 48 flows in both modes. The summary takes medians over rounds.
With --lab PREFIX the latency section runs between scripts/lab.sh's namespaces instead of on loopback (make the
lab first: LAB_PREFIX=PREFIX scripts/lab.sh up 1): every client in PREFIXtx1, every server (irtt, sockperf, one
'lossprobe serve' for the whole section) in PREFIXrx at 198.18.0.1.

The udpref pairs (part of --only udp, or alone with --only udpref) put lossprobe at max and at 1M against
scripts/bench/c/udpref.c (--udpref BINARY; run.sh builds it with gcc), the plainest fast UDP path in C: UDP_SEGMENT
sends, recvmmsg reads, sequence-checked, over 1 and 48 flows; and udpref --gro 1 (UDP_GRO on its receiving sockets),
the like-for-like reference for a lossprobe step that had UDP_GRO on (the default turns it on at max and from 10k/s
a flow; each lossprobe line gives both ratios); and udpref --gro 1 --auth 1 (udpref-gro-auth: lossprobe's 48-byte
header on every datagram, its SipHash-2-4 tag made by the sender and checked by the receiver before it counts, so
the ratio against it leaves out the cost of the authentication itself; the third ratio, where GRO was on). Every
round runs the three udprefs and each lossprobe variant (--udp-variants, e.g. 'udp.send=native;udp.send=netty'),
the starting side rotated from round to round; ratios are taken within a round and the summary gives their
medians. With --lab PREFIX they run across the lab as the latency section does (udpref recv and 'lossprobe serve' in
PREFIXrx, the senders in PREFIXtx1, udpref-gro-auth's two given one fresh --key); serve never accepts the level max,
so there lossprobe's max pairs hold a fixed 3M (above what this machine carries) instead.

The timestamps section (--only timestamps) is an A/B of UDP's two receive paths on 48 flows at `max` and 1M:
lossprobe's own reader with kernel stamps (-X udp.timestamps=auto, the default) against Netty's recvmmsg reads
(-X udp.timestamps=user), both in every round, the order flipped from round to round; the summary gives the
medians and each round's delivered ratio auto / user.

The floor section (--only floor, not in the default set) measures the default mode's floor: in every round, in
turn, lossprobe's UDP stream at 30k/s over 48 flows and over 1 flow (default timing) and sockperf under-load at
30k/s (its p50: sampled replies, half round trips as sockperf prints them); the medians over --repeat rounds of
48-flow transit / 1-flow transit (target <= 2), 48-flow delay p50 / sockperf p50 (<= 1.5) and the 1-flow
process CPU (< 50 %).
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

LOOPBACK = "127.0.0.1"
LOSSPROBE_PORT = 47000          # lossprobe flows use 47000-47047
# The references use ports below the kernel's ephemeral range (32768-60999), so no client socket is in the way.
SOCKPERF_PORT = 31100           # sockperf uses 31100-31147
IPERF_PORT = 31300
AERON_SAMPLE_PORT = 31400
IRTT_PORT = 31500
SOCKPERF_PP_PORT = 31600
UDPREF_PORT = 31700             # udpref uses 31700-31747
LAB_SERVER = "198.18.0.1"       # scripts/lab.sh's receiving host
LAB_CONTROL_PORT = 7400


class Place:
    """Where the latency section's clients and servers run: loopback, or a lab's sender and receiver namespaces."""

    def __init__(self, lab_prefix=None):
        self.lab = lab_prefix
        self.server_addr = LAB_SERVER if lab_prefix else LOOPBACK

    def missing(self):
        """Why the lab cannot be used (None when it can, or on loopback)."""
        if not self.lab:
            return None
        if not re.fullmatch(r"[a-z][a-z0-9]{0,5}-", self.lab):
            return "--lab takes a LAB_PREFIX as scripts/lab.sh does (a short lowercase name ending in '-')"
        names = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True).stdout.split()
        absent = [ns for ns in (self.lab + "rx", self.lab + "tx1") if ns not in names]
        return ("no namespaces %s: make the lab first with LAB_PREFIX=%s scripts/lab.sh up 1"
                % (", ".join(absent), self.lab)) if absent else None

    def server(self, cmd):
        return ["ip", "netns", "exec", self.lab + "rx", *cmd] if self.lab else cmd

    def client(self, cmd):
        return ["ip", "netns", "exec", self.lab + "tx1", *cmd] if self.lab else cmd

    def name(self):
        return "lab %s (%stx1 -> %srx %s)" % (self.lab, self.lab, self.lab, LAB_SERVER) if self.lab else "loopback"


def log(msg):
    print(msg, flush=True)


def port_free(port):
    for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
        s = socket.socket(socket.AF_INET, kind)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a TIME-WAIT leftover does not block a server
        try:
            s.bind((LOOPBACK, port))
        except OSError:
            return False
        finally:
            s.close()
    return True


def stop(proc, sig=signal.SIGINT, wait=5):
    """Stops one process we started, by its own pid, and returns its output."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(wait)
    out = proc.stdout.read() if proc.stdout else ""
    return out


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def percentile(values, pct):
    """Nearest rank: the smallest value with at least pct% of the values at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))  # ceil
    return ordered[int(rank) - 1]


def median(values):
    """The lower middle of the values (an even count never rounds up), as the throughput summary takes."""
    vs = sorted(v for v in values if v is not None)
    return vs[(len(vs) - 1) // 2] if vs else None


# ---------------------------------------------------------------- lossprobe

class Lossprobe:
    def __init__(self, jar, workdir, duration, java_opts):
        self.jar = jar
        self.workdir = workdir
        self.duration = duration
        self.java_opts = java_opts
        self.available = self._transports()

    def _transports(self):
        """A transport exists when a 1-message run of it gets past option parsing and the transport lookup."""
        found = set()
        for t in ("udp", "tcp", "aeron"):
            out_file = os.path.join(self.workdir, "probe-%s.json" % t)
            rc, out = run(["java", *self.java_opts, "-jar", self.jar, "run", "--transport", t, "--ports", "1",
                           "--levels", "1k", "--duration", "100ms", "--warmup", "100ms", "--drain", "200ms",
                           "--base-port", str(LOSSPROBE_PORT), "--quiet", "-o", out_file], 60)
            if rc == 0:
                found.add(t)
            else:
                last = out.strip().splitlines()[-1] if out.strip() else "exit %d" % rc
                log("  lossprobe --transport %s is not available: %s" % (t, last[:160]))
        return found

    def measure(self, transport, flows, level="max", size=64, extra_java_opts=(), step=0, extra_args=(),
                place=None, secret=None):
        """One lossprobe run; with a lab place, from PREFIXtx1 against the section's 'lossprobe serve' in PREFIXrx."""
        place = place or Place()
        tag = "%s-%d-%s-%d%s%s" % (transport, flows, level, size, "".join(extra_java_opts), "".join(extra_args))
        out_file = os.path.join(self.workdir, "lossprobe-%s.json" % re.sub(r"[^\w.-]", "_", tag))
        cmd = place.client(["java", *self.java_opts, *extra_java_opts, "-jar", self.jar, "run", "--transport",
                            transport, "--ports", str(flows),
                            "--base-port", str(LOSSPROBE_PORT), "--levels", level, "--size", str(size),
                            "--duration", "%ds" % self.duration, "--warmup", "2s", "--drain", "1s", "--quiet",
                            "-o", out_file, *extra_args])
        if place.lab:
            cmd += ["--target", "%s:%d" % (place.server_addr, LAB_CONTROL_PORT), "--secret-file", secret]
        load_before = load()
        rc, out = run(cmd, (self.duration + 5) * (level.count(",") + 1) + 60)
        if rc != 0:
            return {"error": "exit %d: %s" % (rc, out.strip()[-300:]), "command": " ".join(cmd)}
        with open(out_file) as f:
            result = json.load(f)
        summaries = [dict(self._summary(result, s, cmd), loadBefore=load_before, loadAfter=load())
                     for s in result["steps"]]
        return summaries if step is None else summaries[step]

    def latency(self, mode, flows, level, timing, place=None, secret=None):
        """One lossprobe run for the latency section: echo round trip or one-way delay, with what measured it."""
        place = place or Place()
        tag = "lat-%s-%d-%s-%s" % (mode, flows, level, timing)
        out_file = os.path.join(self.workdir, "lossprobe-%s.json" % tag)
        cmd = place.client(["java", *self.java_opts, "-jar", self.jar, "run", "--transport", "udp", "--mode", mode,
                            "--ports", str(flows), "--base-port", str(LOSSPROBE_PORT), "--levels", level,
                            "--duration", "%ds" % self.duration, "--warmup", "2s", "--drain", "1s",
                            "--timing", timing, "--quiet", "-o", out_file])
        if place.lab:
            # Between hosts: the section's 'lossprobe serve' on the receiving host runs the receivers (the
            # run sends it the timing mode, so both ends wait the same way).
            cmd += ["--target", "%s:%d" % (place.server_addr, LAB_CONTROL_PORT), "--secret-file", secret]
        load_before = load()
        rc, out = run(cmd, self.duration + 60)
        if rc != 0:
            return {"error": "exit %d: %s" % (rc, out.strip()[-300:]), "command": " ".join(cmd)}
        with open(out_file) as f:
            result = json.load(f)
        step = result["steps"][0]
        figure = step["echo"]["rtt"] if mode == "echo" else step["delay"]
        transit = (step["echo"].get("rttTransit") if mode == "echo" else step["transit"]) or {}
        return {"command": " ".join(cmd), "timing": figure.get("timing"), "basis": figure.get("basis"),
                "uncertaintyUs": figure["uncertaintyNs"] / 1e3 if "uncertaintyNs" in figure else None,
                "transitP50Us": transit.get("p50Ns", 0) / 1e3, "transitP99Us": transit.get("p99Ns", 0) / 1e3,
                "timestampSource": figure.get("timestampSource"), "count": figure["count"],
                "p50Us": figure["p50Ns"] / 1e3, "p99Us": figure["p99Ns"] / 1e3, "maxUs": figure["maxNs"] / 1e3,
                "requestDelayP50Us": step["delay"]["p50Ns"] / 1e3,
                "requestDelaySource": step["delay"].get("timestampSource"),
                "senderLagP50Us": step["senderLag"]["p50Ns"] / 1e3, "senderLagP99Us": step["senderLag"]["p99Ns"] / 1e3,
                "cpuPercent": step["cpu"]["processPercent"], "hostCpuPercent": step["cpu"]["hostPercent"],
                "lost": step["counts"]["lost"] + (step["echo"]["repliesLost"] if mode == "echo" else 0),
                "transportSettings": result["environment"].get("transportSettings"),
                "loadBefore": load_before, "loadAfter": load()}

    @staticmethod
    def drops_check(v):
        """lost == socketDrops + late in words: exact where the sockets counted datagrams, bounds where packets."""
        if not v["lostEqualsSocketDropsPlusLate"]:
            return "NO"
        return "yes" if v["socketDropsCount"] == "datagrams" else "within bounds"

    @staticmethod
    def _summary(result, step, cmd):
        c = step["counts"]
        window_s = step["windowNs"] / 1e9
        identities = (c["received"] + c["lost"] == c["sent"]
                      and c["sent"] + c["sendFailed"] + c["behind"] == c["scheduled"])
        flow_identities = all(
            f["counts"]["received"] + f["counts"]["lost"] == f["counts"]["sent"]
            and f["counts"]["sent"] + f["counts"]["sendFailed"] + f["counts"]["behind"] == f["counts"]["scheduled"]
            for f in step["flows"])
        # Loss is either a socket drop or still queued when Tmax ended (late): nothing else on loopback. With UDP_GRO
        # (udp.gro=auto turns it on at max and high rates) the sockets count dropped packets of up to 64 messages, so
        # only the bounds hold: packets <= lost - late <= packets x N, N the most messages lossprobe's sender puts in
        # one GSO send (64, fewer for large messages); the attribution says it is an estimate.
        drops = step.get("socketDrops")
        estimated = (step.get("attribution") or {}).get("receiverSocketEstimated") == 1
        if drops is None:
            drops_match = True
        elif estimated:
            per_packet = max(1, min(64, 65507 // (step.get("messageSize") or 64)))
            drops_match = drops <= c["lost"] - c["late"] <= drops * per_packet
        else:
            drops_match = drops + c["late"] == c["lost"]
        return {
            "command": " ".join(cmd),
            "transport": step["transport"], "flows": len(step["flows"]), "level": step["level"],
            "targetRate": step["targetRate"], "late": c["late"],
            "windowS": round(window_s, 4),
            "sent": c["sent"], "received": c["received"], "lost": c["lost"], "sendFailed": c["sendFailed"],
            "behind": c["behind"], "duplicates": c["duplicates"], "reordered": c["reordered"],
            "corrupt": c["corrupt"], "socketDrops": step.get("socketDrops"),
            "sentPerS": round(c["sent"] / window_s), "deliveredPerS": round(c["received"] / window_s),
            "saturated": step["saturated"], "cpuPercent": step["cpu"]["processPercent"],
            "hostCpuPercent": step["cpu"]["hostPercent"],
            "delayP50Ns": step["delay"]["p50Ns"], "delayP99Ns": step["delay"]["p99Ns"],
            "identitiesHold": identities and flow_identities, "lostEqualsSocketDropsPlusLate": drops_match,
            "socketDropsCount": "packets" if estimated else "datagrams",
            "receiveGro": (step.get("transportCounters") or {}).get("udp.receiveGro"),
            "socketBuffers": result["environment"].get("socketBuffers"),
            "transportSettings": result["environment"].get("transportSettings"),
        }


# ---------------------------------------------------------------- references

def sockperf(flows, duration, size=64):
    feed = None
    if flows == 1:
        addr = ["-i", LOOPBACK, "-p", str(SOCKPERF_PORT)]
    else:
        fd, feed = tempfile.mkstemp(prefix="sockperf-feed-", suffix=".txt")
        with os.fdopen(fd, "w") as f:
            for i in range(flows):
                f.write("U:%s:%d\n" % (LOOPBACK, SOCKPERF_PORT + i))
        addr = ["-f", feed, "-F", "e"]
    server = subprocess.Popen(["sockperf", "server", *addr], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        time.sleep(1.0)
        cmd = ["sockperf", "throughput", *addr, "-m", str(size), "-t", str(duration)]
        rc, out = run(cmd, duration + 30)
    finally:
        server_out = stop(server)
        if feed:
            os.unlink(feed)
    sent = re.search(r"Total of (\d+) messages sent in ([\d.]+) sec", out)
    rate = re.search(r"Message Rate is (\d+)", out)
    received = re.search(r"Total (\d+) messages received", server_out)
    if not (sent and rate):
        return {"error": "sockperf output not understood (exit %d): %s" % (rc, out.strip()[-300:])}
    seconds = float(sent.group(2))
    res = {"command": " ".join(cmd), "sent": int(sent.group(1)), "seconds": seconds, "sentPerS": int(rate.group(1))}
    if received:
        # The server counts its warm-up messages too and keeps reading after the client stops; indicative only.
        res["serverReceived"] = int(received.group(1))
        res["serverReceivedPerS"] = round(int(received.group(1)) / seconds)
    return res


def iperf3(flows, duration, udp, size=64):
    server = subprocess.Popen(["iperf3", "-s", "-1", "-B", LOOPBACK, "-p", str(IPERF_PORT)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(0.5)
        cmd = ["iperf3", "-c", LOOPBACK, "-p", str(IPERF_PORT), "-l", str(size), "-t", str(duration), "-J"]
        if flows > 1:
            cmd += ["-P", str(flows)]
        if udp:
            cmd += ["-u", "-b", "0"]
        rc, out = run(cmd, duration + 30)
    finally:
        stop(server)
    try:
        end = json.loads(out)["end"]
    except (ValueError, KeyError):
        return {"error": "iperf3 output not understood (exit %d): %s" % (rc, out.strip()[-300:])}
    if udp:
        s = end["sum"]
        sent = s["packets"]
        lost = s["lost_packets"]
        return {"command": " ".join(cmd), "packets": sent, "lost": lost, "seconds": s["seconds"],
                "sentPerS": round(sent / s["seconds"]), "deliveredPerS": round((sent - lost) / s["seconds"])}
    s = end["sum_sent"]
    return {"command": " ".join(cmd), "bytes": s["bytes"], "seconds": s["seconds"],
            "writesPerS": round(s["bytes"] / size / s["seconds"]),
            "receivedWritesPerS": round(end["sum_received"]["bytes"] / size / end["sum_received"]["seconds"])}


def irtt_rtt(duration, interval="1ms", place=None):
    """irtt client and server, one packet per interval: round trips from its per-packet timestamps."""
    place = place or Place()
    if not shutil.which("irtt"):
        return {"error": "irtt is not installed (apt-get install irtt)"}
    fd, out_file = tempfile.mkstemp(prefix="irtt-", suffix=".json")
    os.close(fd)
    # -i 0: the server's minimum interval (10 ms by default) would refuse a 1 ms client.
    server = subprocess.Popen(place.server(["irtt", "server", "-b", "%s:%d" % (place.server_addr, IRTT_PORT),
                                            "-i", "0"]), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    load_before = load()
    try:
        time.sleep(0.5)
        cmd = place.client(["irtt", "client", "-i", interval, "-d", "%ds" % duration, "-Q", "-o", out_file,
                            "%s:%d" % (place.server_addr, IRTT_PORT)])
        rc, out = run(cmd, duration + 30)
        with open(out_file) as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        return {"error": "irtt output not understood (%s)" % e}
    finally:
        stop(server)
        os.unlink(out_file)
    raw, own = [], []
    for rt in result.get("round_trips", []):
        ts = rt.get("timestamps", {})
        c = ts.get("client", {})
        if rt.get("lost") not in (False, "false") or "receive" not in c:
            continue
        raw.append((c["receive"]["monotonic"] - c["send"]["monotonic"]) / 1e3)
        if "rtt" in rt.get("delay", {}):
            own.append(rt["delay"]["rtt"] / 1e3)
    if not raw:
        return {"error": "irtt gave no round trips (exit %d): %s" % (rc, out.strip()[-300:])}
    # irtt's own RTT subtracts the server's processing time (its receive-to-send stamps); the raw one does not,
    # like lossprobe's and sockperf's. Both are kept; the comparison uses irtt's own figure (the smaller).
    return {"command": " ".join(cmd), "count": len(raw), "lost": result["stats"]["packets_sent"] - len(raw),
            "p50Us": percentile(own, 50), "p99Us": percentile(own, 99), "maxUs": max(own),
            "rawP50Us": percentile(raw, 50), "rawP99Us": percentile(raw, 99),
            "loadBefore": load_before, "loadAfter": load()}


def sockperf_ping_pong(duration, mps=None, size=64, place=None):
    """sockperf's ping-pong (one message outstanding), full round trips; mps None: back to back."""
    place = place or Place()
    server = subprocess.Popen(place.server(["sockperf", "server", "-i", place.server_addr, "-p",
                                            str(SOCKPERF_PP_PORT)]),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    load_before = load()
    try:
        time.sleep(1.0)
        cmd = place.client(["sockperf", "ping-pong", "-i", place.server_addr, "-p", str(SOCKPERF_PP_PORT),
                            "-m", str(size), "-t", str(duration), "--full-rtt"])
        if mps:
            cmd += ["--mps", str(mps)]
        rc, out = run(cmd, duration + 30)
    finally:
        stop(server)
    return sockperf_latency(out, rc, cmd, load_before, "ping-pong")


def sockperf_latency(out, rc, cmd, load_before, what):
    """sockperf's latency percentiles (us) from its output."""
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    p50 = re.search(r"percentile 50\.000 =\s*([\d.]+)", out)
    p99 = re.search(r"percentile 99\.000 =\s*([\d.]+)", out)
    mx = re.search(r"<MAX> observation =\s*([\d.]+)", out)
    n = re.search(r"Total (\d+) observations", out)
    if not (p50 and p99):
        return {"error": "sockperf %s output not understood (exit %d): %s" % (what, rc, out.strip()[-300:])}
    return {"command": " ".join(cmd), "count": int(n.group(1)) if n else None, "p50Us": float(p50.group(1)),
            "p99Us": float(p99.group(1)), "maxUs": float(mx.group(1)) if mx else None,
            "loadBefore": load_before, "loadAfter": load()}


def sockperf_under_load(duration, mps, size=64):
    """sockperf under-load on loopback: a stream at mps, its sampled replies timed (half round trips, as it prints)."""
    server = subprocess.Popen(["sockperf", "server", "-i", LOOPBACK, "-p", str(SOCKPERF_PP_PORT)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    load_before = load()
    try:
        time.sleep(1.0)
        cmd = ["sockperf", "under-load", "-i", LOOPBACK, "-p", str(SOCKPERF_PP_PORT), "-m", str(size), "-t",
               str(duration), "--mps", str(mps)]
        rc, out = run(cmd, duration + 30)
    finally:
        stop(server)
    return sockperf_latency(out, rc, cmd, load_before, "under-load")


# The default mode's floor (issue 24's recorded runs): in every round, in turn, 48 flows and 1 flow at 30k/s and
# sockperf under-load at 30k/s; the medians of the rounds against the targets.
FLOOR_TARGETS = [
    # (name, figure, target, how the figure is made)
    ("floor: transit p50, 48 flows / 1 flow", "transitRatio", 2.0, "at most"),
    ("floor: delay p50, 48 flows / sockperf under-load p50", "delayVsSockperf", 1.5, "at most"),
    ("floor: process CPU %, 1 flow at 30k/s", "oneFlowCpu", 50.0, "below"),
]


def floor_section(lp, args, record):
    rounds = []
    for rnd in range(1, args.repeat + 1):
        log("-- floor round %d of %d (load %.2f)" % (rnd, args.repeat, load()))
        many = lp.latency("stream", 48, "30k", "default")
        one = lp.latency("stream", 1, "30k", "default")
        ref = sockperf_under_load(args.duration, 30000)
        entry = {"round": rnd, "flows48": many, "flows1": one, "sockperf": ref}
        if not any("error" in v for v in (many, one, ref)):
            entry["transitRatio"] = ratio(many["transitP50Us"], one["transitP50Us"])
            entry["delayVsSockperf"] = ratio(many["p50Us"], ref["p50Us"])
            entry["oneFlowCpu"] = one["cpuPercent"]
            log("floor: 48 flows delay p50 %.1f us transit p50 %.1f us cpu %.0f%%; 1 flow delay p50 %.1f us transit "
                "p50 %.1f us cpu %.0f%%; sockperf under-load p50 %.1f us" % (
                    many["p50Us"], many["transitP50Us"], many["cpuPercent"], one["p50Us"], one["transitP50Us"],
                    one["cpuPercent"], ref["p50Us"]))
        else:
            for name, v in (("48 flows", many), ("1 flow", one), ("sockperf", ref)):
                if "error" in v:
                    log("floor: %s error: %s" % (name, v["error"]))
        rounds.append(entry)
    record["floor"] = {"rounds": rounds, "results": []}
    for name, key, target, how in FLOOR_TARGETS:
        values = sorted(r[key] for r in rounds if r.get(key) is not None)
        if not values:
            continue
        med = values[(len(values) - 1) // 2]
        met = med <= target if how == "at most" else med < target
        record["floor"]["results"].append({"name": name, "median": med, "values": values, "target": target,
                                           "met": met})
        log("%-56s median %.2f (all: %s) target %s %.2f: %s" % (name, med, ", ".join("%.2f" % v for v in values),
                                                                how, target, "MET" if met else "MISSED"))


# Aeron's pair at lossprobe's smallest message, its 48-byte header (32 B until the header grew to carry the actual
# send time and the tag: lossprobe refuses anything smaller), the same length for EmbeddedThroughput.
AERON_SIZE = 48


def aeron_embedded_throughput(aeron_jar, duration, threading):
    aeron_dir = "/dev/shm/lossprobe-bench-aeron-%d" % os.getpid()
    cmd = ["java", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
           "-Daeron.dir=" + aeron_dir, "-Daeron.dir.delete.on.start=true", "-Daeron.dir.delete.on.shutdown=true",
           "-Daeron.threading.mode=" + threading, "-Daeron.sample.messageLength=%d" % AERON_SIZE,
           "-Daeron.sample.messages=100000000000",
           "-Daeron.sample.channel=aeron:udp?endpoint=%s:%d" % (LOOPBACK, AERON_SAMPLE_PORT),
           "-cp", aeron_jar, "io.aeron.samples.EmbeddedThroughput"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            text=True)
    try:
        time.sleep(duration + 2)   # first report is the JIT warm-up and is dropped
    finally:
        out = stop(proc, signal.SIGKILL)
        subprocess.run(["rm", "-rf", aeron_dir])
    rates = [float(m.group(1)) for m in re.finditer(r"^([\d.e+]+) msgs/sec", out, re.M)]
    if len(rates) < 2:
        return {"error": "EmbeddedThroughput output not understood: %s" % out.strip()[-300:]}
    steady = rates[1:]
    return {"command": " ".join(cmd), "threadingMode": threading, "reports": [round(r) for r in rates],
            "msgsPerS": round(sum(steady) / len(steady))}


# ---------------------------------------------------------------- the run

def ratio(a, b):
    return round(a / b, 3) if a and b else None


def fmt(v):
    return "%11s" % ("{:,.0f}".format(v) if isinstance(v, (int, float)) else "-")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jar", required=True)
    ap.add_argument("--aeron-jar", help="aeron-all's jar, for the aeron section's reference (run.sh fetches it)")
    ap.add_argument("--duration", type=int, default=3, help="seconds per measurement")
    ap.add_argument("--out", default="bench-result.json")
    ap.add_argument("--aeron-threading", default="SHARED")
    ap.add_argument("--only", default="udp,pacing,tcp,aeron,latency,timestamps",
                    help="sections; udp includes the udpref pairs, udpref alone runs only those; floor (not in the "
                         "default) runs the default mode's floor against sockperf under-load")
    ap.add_argument("--java-opts", default="")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the UDP pairs and of the floor section; the "
                                                          "summary takes medians")
    ap.add_argument("--lab", metavar="PREFIX", help="latency section across scripts/lab.sh's namespaces (made with "
                                                   "LAB_PREFIX=PREFIX scripts/lab.sh up 1): clients in PREFIXtx1, "
                                                   "servers in PREFIXrx")
    ap.add_argument("--udpref", metavar="BINARY", help="scripts/bench/c/udpref.c built (run.sh builds it with gcc): "
                                                      "the C UDP_SEGMENT + recvmmsg reference of the udpref pairs")
    ap.add_argument("--udp-variants", default="", metavar="A;B",
                    help="udpref pairs: lossprobe variants, ';' between variants, ',' between one variant's -X "
                         "settings (e.g. 'udp.send=native;udp.send=netty'); default: lossprobe's defaults")
    args = ap.parse_args()
    only = set(args.only.split(","))
    d = args.duration
    for p in [LOSSPROBE_PORT + i for i in range(48)] + [SOCKPERF_PORT + i for i in range(48)] + [
            IPERF_PORT, AERON_SAMPLE_PORT, IRTT_PORT, SOCKPERF_PP_PORT] + [UDPREF_PORT + i for i in range(48)]:
        if not port_free(p):
            log("warning: port %d on %s is in use now (the ports are set at the top of %s)" % (p, LOOPBACK,
                                                                                                 __file__))
    work = tempfile.mkdtemp(prefix="lossprobe-bench-")
    record = {"startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "durationS": d,
              "host": host_facts(), "loadBefore": load(), "pairs": [], "skipped": []}
    log("lossprobe bench: %s, %s, kernel %s, load %.2f; %d s per measurement; work dir %s" % (
        record["host"]["cpuModel"], "%d cores" % record["host"]["nproc"], record["host"]["kernel"],
        record["loadBefore"], d, work))
    lp = Lossprobe(args.jar, work, d, args.java_opts.split())
    log("lossprobe transports available: %s" % ", ".join(sorted(lp.available)))

    def pair(name, ours, ref, ours_key, ref_key, target, note=""):
        r = ratio(ours.get(ours_key), ref.get(ref_key))
        entry = {"name": name, "lossprobe": ours, "reference": ref, "ratio": r, "target": target,
                 "met": (r is not None and r >= target), "note": note}
        record["pairs"].append(entry)
        extra = ""
        if "identitiesHold" in ours:
            extra = "\n%52s identities %s, sent/s %s, lost %d = socketDrops %s (%s) + late %d: %s, saturated %s" % (
                "", "ok" if ours["identitiesHold"] else "BROKEN", "{:,}".format(ours["sentPerS"]), ours["lost"],
                ours["socketDrops"], ours["socketDropsCount"], ours["late"], Lossprobe.drops_check(ours),
                ours["saturated"])
        log("%-52s lossprobe %s  ref %s  ratio %s (target >= %.2f: %s)%s" % (
            name, fmt(ours.get(ours_key)), fmt(ref.get(ref_key)), r, target,
            "MET" if entry["met"] else "MISSED", extra))
        for side, v in (("lossprobe", ours), ("reference", ref)):
            if "error" in v:
                log("    %s error: %s" % (side, v["error"]))

    def skip(name, why):
        record["skipped"].append({"name": name, "why": why})
        log("%-52s SKIPPED: %s" % (name, why))

    for rnd in range(1, args.repeat + 1):
        if "udp" not in only:
            break
        if args.repeat > 1:
            log("-- UDP round %d of %d (load %.2f)" % (rnd, args.repeat, load()))
        for flows in (1, 48):
            sp = sockperf(flows, d)
            ip = iperf3(flows, d, udp=True)
            if "udp" not in lp.available:
                skip("udp %d flow(s)" % flows, "lossprobe has no udp transport")
                continue
            ours = lp.measure("udp", flows)
            pair("udp %2d flow(s) max: delivered/s vs sockperf sent/s" % flows, ours, sp, "deliveredPerS",
                 "sentPerS", 1.0)
            pair("udp %2d flow(s) max: delivered/s vs iperf3 sent/s" % flows, ours, ip, "deliveredPerS",
                 "sentPerS", 1.0)
            if flows > 1:
                one = lp.measure("udp", flows, extra_java_opts=("-Dlossprobe.udp.rxThreads=1",))
                pair("udp %2d flow(s) max, one receive thread" % flows, one, sp, "deliveredPerS", "sentPerS", 1.0,
                     "the receive-thread default (2 here) against a single receiving event loop")
            exact = lp.measure("udp", flows, extra_java_opts=("-Dlossprobe.udp.gro=off",))
            pair("udp %2d flow(s) max, udp.gro off (drops exact)" % flows, exact, sp, "deliveredPerS",
                 "sentPerS", 1.0, "without UDP_GRO, which the default turns on at max: socketDrops count "
                                  "datagrams, so lost == socketDrops + late exactly")
            if sp.get("sentPerS"):
                level = str(int(sp["sentPerS"]))
                fixed = lp.measure("udp", flows, level=level)
                pair("udp %2d flow(s) at sockperf's rate: delivered/s" % flows, fixed, sp,
                     "deliveredPerS", "sentPerS", 0.99, "lossprobe held sockperf's own sent rate as a fixed level")

    if ("udp" in only or "udpref" in only) and "udp" in lp.available:
        udpref_section(lp, args, record)

    if "pacing" in only and "udp" in lp.available:
        steps = lp.measure("udp", 48, level="30k,100k,1M", step=None)
        if isinstance(steps, dict):
            log("udp pacing: error %s" % steps.get("error"))
        else:
            for st in steps:
                r = ratio(st["sentPerS"], st["targetRate"])
                ok = r is not None and abs(1 - r) <= 0.01
                record["pacing"] = record.get("pacing", []) + [dict(st, ratio=r, met=ok)]
                log("udp pacing 48 flows %-6s sent/s %s = %.4f x target (within 1%%: %s), delivered/s %s, lost %d, "
                    "p50 %.0f us, p99 %.0f us" % (st["level"], fmt(st["sentPerS"]), r or 0, "MET" if ok else "MISSED",
                                                 fmt(st["deliveredPerS"]), st["lost"], st["delayP50Ns"] / 1e3,
                                                 st["delayP99Ns"] / 1e3))

    if "latency" in only:
        latency_section(lp, args, record)

    if "floor" in only and "udp" in lp.available:
        floor_section(lp, args, record)

    if "timestamps" in only and "udp" in lp.available:
        timestamps_ab(lp, args, record)

    if "tcp" in only:
        for flows in (1, 48):
            ip = iperf3(flows, d, udp=False)
            if "tcp" not in lp.available:
                skip("tcp %d flow(s)" % flows, "lossprobe --transport tcp is not available in %s yet" % args.jar)
                continue
            ours = lp.measure("tcp", flows)
            pair("tcp %2d flow(s) max: messages/s vs iperf3 -l 64 writes/s" % flows, ours, ip, "deliveredPerS",
                 "writesPerS", 2.0)

    if "aeron" in only and not args.aeron_jar:
        skip("aeron 48 streams", "no --aeron-jar for EmbeddedThroughput")
    elif "aeron" in only:
        ref = aeron_embedded_throughput(args.aeron_jar, d, args.aeron_threading)
        if "aeron" not in lp.available:
            skip("aeron 48 streams", "lossprobe --transport aeron is not available in %s yet (EmbeddedThroughput "
                                     "alone: %s msgs/s)" % (args.jar, ref.get("msgsPerS")))
        else:
            ours = lp.measure("aeron", 48, size=AERON_SIZE)
            pair("aeron 48 streams %d B max: messages/s vs EmbeddedThroughput" % AERON_SIZE, ours, ref, "deliveredPerS",
                 "msgsPerS", 0.9)

    if args.repeat > 1:
        log("-- medians over %d rounds" % args.repeat)
        names = []
        for p in record["pairs"]:
            if p["name"] not in names:
                names.append(p["name"])
        record["medians"] = []
        for name in names:
            rs = sorted(p["ratio"] for p in record["pairs"] if p["name"] == name and p["ratio"] is not None)
            ours = sorted(p["lossprobe"].get("deliveredPerS", 0) for p in record["pairs"] if p["name"] == name)
            refs = [p for p in record["pairs"] if p["name"] == name]
            if not rs:
                continue
            med = rs[(len(rs) - 1) // 2]     # the lower middle: an even count never rounds up
            target = refs[0]["target"]
            record["medians"].append({"name": name, "medianRatio": med, "ratios": rs, "target": target,
                                      "met": med >= target, "lossprobeDelivered": ours})
            log("%-56s median ratio %.3f (all: %s) target >= %.2f: %s" % (
                name, med, ", ".join("%.3f" % r for r in rs), target, "MET" if med >= target else "MISSED"))

    record["loadAfter"] = load()
    record["finishedAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(args.out, "w") as f:
        json.dump(record, f, indent=2)
    log("load before %.2f, after %.2f; JSON record: %s" % (record["loadBefore"], record["loadAfter"], args.out))
    print(json.dumps({"pairs": [{"name": p["name"], "ratio": p["ratio"], "target": p["target"], "met": p["met"]}
                                for p in record["pairs"]], "skipped": record["skipped"]}, indent=1))


# Like for like: irtt and sockperf time a round trip from their actual send, so lossprobe's figure here is its round
# trip from the actual send too (echo.rttTransit: the send time the sender stamps into each request as it leaves).
# lossprobe's rtt from the intended send time (free of coordinated omission) also carries its sender's lag behind
# the schedule; its ratios are printed beside these, as information.
LATENCY_TARGETS = [
    # (name, ours, reference, figure (ours from the actual send), target: ours / reference at most this)
    ("echo 1k/s 1 flow, default: p50 vs irtt", "lossprobe-default", "irtt", "p50Us", 1.2),
    ("echo 1k/s 1 flow, default: p99 vs irtt", "lossprobe-default", "irtt", "p99Us", 2.0),
    ("echo 1k/s 1 flow, precision: p50 vs irtt", "lossprobe-precision", "irtt", "p50Us", 1.2),
    ("echo 1k/s 1 flow, precision: p99 vs irtt", "lossprobe-precision", "irtt", "p99Us", 2.0),
    ("echo 1k/s 1 flow, precision: p50 vs sockperf ping-pong 1k/s", "lossprobe-precision", "sockperf-pp-1k",
     "p50Us", 1.5),
    ("echo 1k/s 1 flow, precision: p50 vs sockperf ping-pong back to back", "lossprobe-precision",
     "sockperf-pp-max", "p50Us", 1.5),
]


def latency_section(lp, args, record):
    """Round trips at 1k/s over one flow, every tool once per round in turn; then one-way delay at 30k/48 flows."""
    place, server, secret = section_place(lp, args, record, "latency")
    if not place:
        return
    try:
        latency_rounds(lp, args, record, place, secret)
    finally:
        if server:
            stop(server)


def section_place(lp, args, record, section, serve_args=()):
    """Where a section runs: (place, server, secret); across the lab a secret and one 'lossprobe serve' in PREFIXrx
    for the section (the caller stops it). (None, None, None), logged and recorded, when the lab cannot be used."""
    place = Place(args.lab)
    why = place.missing()
    server, secret = None, None
    if not why and place.lab:
        secret = os.path.join(lp.workdir, "lab.secret")
        rc, out = run(["java", "-jar", lp.jar, "keygen", secret], 60)
        if rc != 0:
            why = "cannot make a secret for the lab: %s" % out.strip()[-200:]
        else:
            server, why = lab_server(lp, place, secret, extra=serve_args)
    if why:
        log("%s: %s" % (section, why))
        record[section] = {"place": place.name(), "error": why}
        return None, None, None
    return place, server, secret


def lab_server(lp, place, secret, timeout_s=30, extra=()):
    """One 'lossprobe serve' in the lab's receiving namespace for the whole section; its log goes to the work dir."""
    log_file = os.path.join(lp.workdir, "serve.log")
    with open(log_file, "w") as f:
        server = subprocess.Popen(place.server(["java", *lp.java_opts, "-jar", lp.jar, "serve", "--bind",
                                                place.server_addr, "--port", str(LAB_CONTROL_PORT),
                                                "--secret-file", secret, *extra]),
                                  stdout=f, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with open(log_file) as f:
            text = f.read()
        if "listening on" in text:
            return server, None
        if server.poll() is not None:
            return None, "lossprobe serve in %srx exited %d: %s" % (place.lab, server.returncode, text.strip()[-300:])
        time.sleep(0.1)
    stop(server)
    return None, "lossprobe serve in %srx did not listen within %d s (log %s)" % (place.lab, timeout_s, log_file)


def latency_rounds(lp, args, record, place, secret):
    d = args.duration
    log("-- latency on %s" % place.name())
    rounds = []
    for rnd in range(1, args.repeat + 1):
        log("-- latency round %d of %d (load %.2f)" % (rnd, args.repeat, load()))
        r = {}
        r["irtt"] = irtt_rtt(d, place=place)
        r["lossprobe-default"] = lp.latency("echo", 1, "1k", "default", place, secret)
        r["sockperf-pp-1k"] = sockperf_ping_pong(d, mps=1000, place=place)
        r["lossprobe-precision"] = lp.latency("echo", 1, "1k", "precision", place, secret)
        r["sockperf-pp-max"] = sockperf_ping_pong(d, place=place)
        for name, v in r.items():
            if "error" in v:
                log("  %-22s error: %s" % (name, v["error"]))
            else:
                extra = ""
                if name.startswith("lossprobe"):
                    extra = (" [%s, %s stamps] cpu %.0f%% request delay p50 %.1f us (%s) sender lag p50 %.1f p99 %.1f us"
                             "; from the actual send: p50 %.1f p99 %.1f us") % (
                        v["timing"], v["timestampSource"], v["cpuPercent"], v["requestDelayP50Us"],
                        v["requestDelaySource"], v["senderLagP50Us"], v["senderLagP99Us"], v["transitP50Us"],
                        v["transitP99Us"])
                elif name == "irtt":
                    extra = " (raw, with the server's processing: p50 %.1f p99 %.1f)" % (v["rawP50Us"],
                                                                                        v["rawP99Us"])
                log("  %-22s rtt p50 %8.1f us  p99 %9.1f us  n %6s load %.2f->%.2f%s" % (
                    name, v["p50Us"], v["p99Us"], v["count"], v["loadBefore"], v["loadAfter"], extra))
        rounds.append(r)
    delays = {}
    for timing in ("default", "precision"):
        delays[timing] = lp.latency("stream", 48, "30k", timing, place, secret)
        v = delays[timing]
        if "error" in v:
            log("  one-way 30k/48 %-9s error: %s" % (timing, v["error"]))
        else:
            basis = "" if not v["basis"] else ", basis %s +-%.1f us" % (v["basis"], v["uncertaintyUs"] or 0)
            log("  one-way delay 30k/s 48 flows %-9s p50 %7.1f us p99 %9.1f us [%s stamps%s] cpu %.0f%% "
                "load %.2f->%.2f" % (timing, v["p50Us"], v["p99Us"], v["timestampSource"], basis, v["cpuPercent"],
                                     v["loadBefore"], v["loadAfter"]))
    summary = []
    log("-- latency: medians over %d round(s)" % len(rounds))
    for tool in ("irtt", "lossprobe-default", "lossprobe-precision", "sockperf-pp-1k", "sockperf-pp-max"):
        p50 = median([r[tool].get("p50Us") for r in rounds])
        p99 = median([r[tool].get("p99Us") for r in rounds])
        if p50 is not None:
            log("  %-22s rtt p50 %8.1f us  p99 %9.1f us" % (tool, p50, p99))
    for name, ours, ref, figure, target in LATENCY_TARGETS:
        mine = "transit" + figure[0].upper() + figure[1:]  # p50Us -> transitP50Us: from the actual send
        ratios = [round(r[ours][mine] / r[ref][figure], 3) for r in rounds
                  if r[ours].get(mine) and r[ref].get(figure)]
        med = median(ratios)
        met = med is not None and med <= target
        summary.append({"name": name, "medianRatio": med, "ratios": ratios, "target": target, "met": met,
                        "lossprobeFigure": "rtt from the actual send (echo.rttTransit)",
                        "lossprobeMedian": median([r[ours].get(mine) for r in rounds]),
                        "referenceMedian": median([r[ref].get(figure) for r in rounds])})
        log("  %-70s median ratio %s (rounds: %s) target <= %.1f: %s" % (
            name, med, ", ".join(str(x) for x in ratios), target, "MET" if met else "MISSED"))
    # Not the targets' figure, shown beside it: lossprobe's rtt from the intended send time, which adds the
    # sender's lag behind its schedule (senderLag) to the round trip; no peer tool has such a figure.
    for ours in ("lossprobe-default", "lossprobe-precision"):
        for figure in ("p50Us", "p99Us"):
            ratios = [round(r[ours][figure] / r["irtt"][figure], 3) for r in rounds
                      if r[ours].get(figure) and r["irtt"].get(figure)]
            summary.append({"name": "%s from the intended send, %s vs irtt (information)" % (ours, figure[:3]),
                            "medianRatio": median(ratios), "ratios": ratios})
            log("  %-70s median ratio %s (rounds: %s)" % (
                "%s rtt from the intended send, %s vs irtt (not a target)" % (ours, figure[:3]), median(ratios),
                ", ".join(str(x) for x in ratios)))
    p = delays.get("precision", {})
    ok = "p50Us" in p and p["p50Us"] < 50
    summary.append({"name": "one-way delay 30k/s 48 flows, precision: p50 under 50 us", "value": p.get("p50Us"),
                    "timestampSource": p.get("timestampSource"), "met": ok})
    log("  %-70s p50 %s us [%s stamps]: %s" % ("one-way delay 30k/s 48 flows, precision: p50 < 50 us",
                                               p.get("p50Us"), p.get("timestampSource"), "MET" if ok else "MISSED"))
    record["latency"] = {"place": place.name(), "rounds": rounds, "oneWay": delays, "summary": summary}


TIMESTAMP_AB_LEVELS = ("max", "1M")
UDPREF_FLOWS = (1, 48)
UDPREF_LEVELS = ("max", "1M")
# udpref as the issue defines it (recvmmsg of single datagrams), and with UDP_GRO: the like-for-like reference for
# a lossprobe step that had UDP_GRO on (udp.gro=auto turns it on at max and from 10k/s a flow); and with UDP_GRO and
# --auth 1: lossprobe's header and SipHash-2-4 tag on every datagram, made and checked, the reference that does the
# authentication's work too. Each side: (gro, auth).
UDPREF_SIDES = ("udpref", "udpref-gro", "udpref-gro-auth")
UDPREF_SIDE_OPTIONS = {"udpref": (False, False), "udpref-gro": (True, False), "udpref-gro-auth": (True, True)}
# 'lossprobe serve' never accepts the level max (a controller could flood it); across the lab the max pairs hold
# this fixed level instead, above what this machine carries, with serve's --max-rate raised to it.
UDPREF_LAB_MAX = "3M"


def udpref(binary, flows, duration, place, size=64, gro=False, auth=False):
    """The C reference (scripts/bench/c/udpref.c): UDP_SEGMENT sends of 64 datagrams round robin over the flows'
    sockets, recvmmsg reads, every datagram's sequence checked; with gro, UDP_GRO on the receiving sockets (each
    coalesced read cut into its datagrams); with auth, lossprobe's header and SipHash-2-4 tag on every datagram,
    checked before it is counted (a failed tag is badTag, not received). On loopback one process ('both', its own
    random key); across the lab its receiver in PREFIXrx and its sender in PREFIXtx1, given one fresh --key. CPU is
    the processes' own (user + system) over the sender's seconds, as lossprobe's processPercent is over its window."""
    common = ["--addr", place.server_addr, "--port", str(UDPREF_PORT), "--flows", str(flows), "--size", str(size),
              "--gro", "1" if gro else "0"]
    if auth:
        common += ["--auth", "1"] + (["--key", os.urandom(16).hex()] if place.lab else [])
    load_before = load()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if place.lab:
        receiver = subprocess.Popen(place.server([binary, "recv", *common, "--seconds", str(duration)]),
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(0.3)  # the receiver binds first (a start-up gap, as udpref's own 'both' leaves)
        cmd = place.client([binary, "send", *common, "--seconds", str(duration)])
        rc, out = run(cmd, duration + 30)
        try:
            rx_out, _ = receiver.communicate(timeout=duration + 35)
        except subprocess.TimeoutExpired:
            rx_out = stop(receiver, signal.SIGKILL)
        out = out + "\n" + (rx_out or "")
    else:
        cmd = [binary, "both", *common, "--seconds", str(duration)]
        rc, out = run(cmd, duration + 35)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    roles = {}
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                v = json.loads(line)
                roles[v.get("role")] = v
            except ValueError:
                pass
    tx, rx = roles.get("send"), roles.get("recv")
    if rc != 0 or not tx or not rx:
        return {"error": "udpref output not understood (exit %d): %s" % (rc, out.strip()[-300:]),
                "command": " ".join(cmd)}
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"command": " ".join(cmd), "sent": tx["sent"], "refused": tx["refused"], "sendCalls": tx["calls"],
            "received": rx["received"], "missing": rx["missing"], "reordered": rx["reordered"],
            "auth": rx.get("auth", 0), "badTag": rx.get("badTag", 0), "seconds": tx["seconds"],
            "sentPerS": tx["sentPerS"],
            "deliveredPerS": round(rx["received"] / tx["seconds"]) if tx["seconds"] else 0,
            "lost": tx["sent"] - rx["received"],
            "cpuPercent": round(100 * cpu_s / tx["seconds"]) if tx["seconds"] else None,
            "loadBefore": load_before, "loadAfter": load()}


def udpref_section(lp, args, record):
    """lossprobe at max and 1M against udpref over 1 and 48 flows (on loopback, or across the lab with --lab), each
    variant of --udp-variants and udpref in every round, the order rotated from round to round; the summary gives
    medians over rounds and the median of each round's ratio."""
    if not args.udpref or not os.access(args.udpref, os.X_OK):
        why = "no udpref binary (--udpref; scripts/bench/run.sh builds scripts/bench/c/udpref.c with gcc)"
        record["skipped"].append({"name": "udpref pairs", "why": why})
        log("%-52s SKIPPED: %s" % ("udpref pairs", why))
        return
    variants = [tuple(v.strip() for v in var.split(",") if v.strip()) for var in args.udp_variants.split(";")]
    variants = [v for v in variants if v] or [()]
    place, server, secret = section_place(lp, args, record, "udpref", ("--max-rate", UDPREF_LAB_MAX))
    if not place:
        return
    runs = []
    try:
        log("-- udpref pairs on %s; lossprobe variants: %s" % (
            place.name(), "; ".join(",".join(v) or "defaults" for v in variants)))
        for rnd in range(1, args.repeat + 1):
            log("-- udpref round %d of %d (load %.2f)" % (rnd, args.repeat, load()))
            for flows in UDPREF_FLOWS:
                # udpref (without and with UDP_GRO, and with UDP_GRO and auth) first, then each variant; the start
                # rotates every round so no side always goes first
                sides = list(UDPREF_SIDES) + [(level, v) for level in UDPREF_LEVELS for v in variants]
                shift = (rnd - 1) % len(sides)
                for side in sides[shift:] + sides[:shift]:
                    if side in UDPREF_SIDES:
                        gro, auth = UDPREF_SIDE_OPTIONS[side]
                        v = udpref(args.udpref, flows, args.duration, place, gro=gro, auth=auth)
                        runs.append({"round": rnd, "flows": flows, "side": side, "result": v})
                        if "error" in v:
                            log("  %2d flow(s) %s error: %s" % (flows, side, v["error"]))
                        else:
                            log("  %2d flow(s) %-18s delivered/s %s sent/s %s lost %d missing %d%s "
                                "cpu %s%% load %.2f->%.2f" % (flows, side, fmt(v["deliveredPerS"]),
                                                              fmt(v["sentPerS"]), v["lost"], v["missing"],
                                                              " badTag %d" % v["badTag"] if auth else "",
                                                              v["cpuPercent"], v["loadBefore"], v["loadAfter"]))
                        continue
                    level, var = side
                    extra = [a for x in var for a in ("-X", x)]
                    v = lp.measure("udp", flows, level=UDPREF_LAB_MAX if place.lab and level == "max" else level,
                                   extra_args=extra, place=place, secret=secret)
                    runs.append({"round": rnd, "flows": flows, "side": "lossprobe", "level": level,
                                 "variant": ",".join(var), "result": v})
                    if "error" in v:
                        log("  %2d flow(s) %-4s %s error: %s" % (flows, level, ",".join(var), v["error"]))
                        continue
                    log("  %2d flow(s) %-4s %-14s delivered/s %s sent/s %s lost %d (socketDrops %s, %s) sendFailed "
                        "%d behind %d cpu %.0f%% identities %s lost==drops+late %s load %.2f->%.2f" % (
                            flows, level, ",".join(var) or "defaults", fmt(v["deliveredPerS"]), fmt(v["sentPerS"]),
                            v["lost"], v["socketDrops"], v["socketDropsCount"], v["sendFailed"], v["behind"],
                            v["cpuPercent"], "ok" if v["identitiesHold"] else "BROKEN", Lossprobe.drops_check(v),
                            v["loadBefore"], v["loadAfter"]))
    finally:
        if server:
            stop(server)
    record["udpref"] = {"place": place.name(), "runs": runs, "summary": udpref_summary(runs, variants, args.repeat)}


def round_ratios(mine, refs_of):
    """Per round, mine's delivered/s over its reference's in the same round (refs_of(result): the reference's
    results by round); a round without a reference figure is left out."""
    out = []
    for rnd, v in sorted(mine.items()):
        ref = refs_of(v).get(rnd)
        if ref and ref.get("deliveredPerS"):
            out.append(round(v["deliveredPerS"] / ref["deliveredPerS"], 3))
    return out


def udpref_summary(runs, variants, rounds):
    """Medians over rounds, and per round lossprobe / udpref (delivered/s), like for like (udpref-gro where the step
    had GRO on) and with auth (udpref-gro-auth where it had GRO on) and, with two variants, first / second."""
    ok = [r for r in runs if "error" not in r["result"]]
    summary = []
    log("-- udpref pairs: medians over %d round(s)" % rounds)
    for flows in UDPREF_FLOWS:
        by_side = {}
        for side in UDPREF_SIDES:
            by_side[side] = {r["round"]: r["result"] for r in ok if r["side"] == side and r["flows"] == flows}
            ref_med = {k: median([v[k] for v in by_side[side].values()])
                       for k in ("deliveredPerS", "cpuPercent", "lost")}
            log("  %2d flow(s) %-18s delivered/s %s cpu %s%% lost %s (median of %d)" % (
                flows, side, fmt(ref_med["deliveredPerS"]), ref_med["cpuPercent"], ref_med["lost"],
                len(by_side[side])))
            summary.append(dict(flows=flows, side=side, rounds=len(by_side[side]), **ref_med))
        refs = by_side["udpref"]
        for level in UDPREF_LEVELS:
            per_variant = {}
            for var in variants:
                name = ",".join(var)
                mine = {r["round"]: r["result"] for r in ok if r["side"] == "lossprobe" and r["flows"] == flows
                        and r["level"] == level and r["variant"] == name}
                per_variant[name] = mine
                ratios = round_ratios(mine, lambda v: refs)
                med = {k: median([v[k] for v in mine.values()]) for k in ("deliveredPerS", "sentPerS", "lost",
                                                                          "cpuPercent")}
                held = all(v["identitiesHold"] for v in mine.values())
                # like for like: against udpref with UDP_GRO where this lossprobe step had it on
                alike = round_ratios(mine, lambda v: by_side["udpref-gro" if v.get("receiveGro") == 1 else "udpref"])
                # with auth: against udpref-gro-auth (the tag made and checked too) where this step had GRO on; a
                # round whose step had it off has no such reference and is left out
                authed = round_ratios(mine, lambda v: by_side["udpref-gro-auth"] if v.get("receiveGro") == 1 else {})
                gro = sorted({str(v.get("receiveGro")) for v in mine.values()})
                summary.append(dict(flows=flows, level=level, variant=name, rounds=len(mine), ratiosToUdpref=ratios,
                                    medianRatioToUdpref=median(ratios), receiveGro=gro,
                                    ratiosLikeForLike=alike, medianRatioLikeForLike=median(alike),
                                    ratiosToUdprefGroAuth=authed, medianRatioToUdprefGroAuth=median(authed),
                                    identitiesHeld=held, **med))
                log("  %2d flow(s) %-4s %-14s delivered/s %s sent/s %s lost %s cpu %s%% GRO %s; vs udpref median "
                    "%s (rounds: %s); like for like (udpref-gro where GRO was on) median %s (rounds: %s); "
                    "with auth (udpref-gro-auth where GRO was on) median %s (rounds: %s); identities %s" % (
                        flows, level, name or "defaults", fmt(med["deliveredPerS"]), fmt(med["sentPerS"]),
                        med["lost"], med["cpuPercent"], ",".join(gro), median(ratios),
                        ", ".join(str(x) for x in ratios), median(alike), ", ".join(str(x) for x in alike),
                        median(authed), ", ".join(str(x) for x in authed), "held" if held else "BROKEN"))
            if len(variants) == 2:
                a, b = (",".join(v) for v in variants)
                ratios = round_ratios(per_variant[a], lambda v: per_variant[b])
                summary.append({"flows": flows, "level": level, "ratioOf": [a, b], "ratios": ratios,
                                "medianRatio": median(ratios)})
                log("  %2d flow(s) %-4s %s / %s: median %s (rounds: %s)" % (
                    flows, level, a, b, median(ratios), ", ".join(str(x) for x in ratios)))
    return summary


def timestamps_ab(lp, args, record):
    """UDP's two receive paths head to head on 48 flows: lossprobe's own reader with kernel stamps
    (-X udp.timestamps=auto, the default) and Netty's recvmmsg reads (user); the order flips every round."""
    log("-- udp receive path A/B, 48 flows: -X udp.timestamps=auto (own reader, kernel stamps) vs user (Netty)")
    runs = []
    for rnd in range(1, args.repeat + 1):
        log("-- A/B round %d of %d (load %.2f)" % (rnd, args.repeat, load()))
        order = ("auto", "user") if rnd % 2 else ("user", "auto")
        for level in TIMESTAMP_AB_LEVELS:
            for ts in order:
                v = lp.measure("udp", 48, level=level, extra_args=("-X", "udp.timestamps=" + ts))
                runs.append({"round": rnd, "level": level, "timestamps": ts, "result": v})
                if "error" in v:
                    log("  %-4s %-4s error: %s" % (level, ts, v["error"]))
                    continue
                settings = v.get("transportSettings") or {}
                log("  %-4s udp.timestamps=%-4s delivered/s %s sent/s %s lost %d (socketDrops %s) cpu %.0f%% "
                    "[kernelTimestamps %s, %s rx threads] load %.2f->%.2f" % (
                        level, ts, fmt(v["deliveredPerS"]), fmt(v["sentPerS"]), v["lost"], v["socketDrops"],
                        v["cpuPercent"], settings.get("udp.kernelTimestamps"), settings.get("udp.receiveThreads"),
                        v["loadBefore"], v["loadAfter"]))
    summary = []
    log("-- A/B medians over %d round(s)" % args.repeat)
    for level in TIMESTAMP_AB_LEVELS:
        med = {}
        for ts in ("auto", "user"):
            vs = [r["result"] for r in runs if r["level"] == level and r["timestamps"] == ts
                  and "error" not in r["result"]]
            med[ts] = {"deliveredPerS": median([v["deliveredPerS"] for v in vs]),
                       "lost": median([v["lost"] for v in vs]), "cpuPercent": median([v["cpuPercent"] for v in vs]),
                       "rounds": len(vs)}
        # Paired within a round: the ratio of each round's two runs, so a round's load hits both sides.
        ratios = []
        for rnd in range(1, args.repeat + 1):
            pair = {r["timestamps"]: r["result"] for r in runs if r["round"] == rnd and r["level"] == level}
            a, u = pair.get("auto", {}), pair.get("user", {})
            if a.get("deliveredPerS") and u.get("deliveredPerS"):
                ratios.append(round(a["deliveredPerS"] / u["deliveredPerS"], 3))
        summary.append({"level": level, "auto": med["auto"], "user": med["user"], "ratios": ratios,
                        "medianRatio": median(ratios)})
        log("  %-4s delivered/s auto %s user %s; auto/user median %s (rounds: %s); cpu %% auto %s user %s; "
            "lost auto %s user %s" % (level, fmt(med["auto"]["deliveredPerS"]), fmt(med["user"]["deliveredPerS"]),
                                      median(ratios), ", ".join(str(x) for x in ratios), med["auto"]["cpuPercent"],
                                      med["user"]["cpuPercent"], med["auto"]["lost"], med["user"]["lost"]))
    record["timestampsAB"] = {"runs": runs, "summary": summary}


def host_facts():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"nproc": os.cpu_count(), "cpuModel": model, "kernel": os.uname().release,
            "java": subprocess.run(["java", "-version"], stderr=subprocess.PIPE, text=True).stderr.splitlines()[0]}


if __name__ == "__main__":
    main()

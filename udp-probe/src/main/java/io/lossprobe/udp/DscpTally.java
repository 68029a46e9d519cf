package io.lossprobe.udp;

import io.lossprobe.core.plan.Dscp;
import io.lossprobe.core.plan.Plan;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * With {@code --dscp}: per flow and step, the traffic classes its datagrams arrived with, against the class the
 * plan sent it with. The counts are the stamped readers' ({@link StampedReader.Socket#classes}); this takes their
 * deltas over each step and puts them in the flow's counters, with a note for each flow that arrived re-marked.
 */
final class DscpTally {
    private final Plan plan;
    /** By flow; null when the classes are not read (no --dscp, or Netty's reads). */
    private final AtomicLongArray[] classes;
    private final long[][] atStepStart;

    DscpTally(Plan plan, AtomicLongArray[] classes) {
        this.plan = plan;
        this.classes = classes;
        this.atStepStart = classes == null ? null : new long[classes.length][StampedReader.UNREAD_CLASS + 1];
    }

    void beginStep() {
        if (classes == null) {
            return;
        }
        for (int f = 0; f < classes.length; f++) {
            for (int d = 0; d <= StampedReader.UNREAD_CLASS; d++) {
                atStepStart[f][d] = classes[f].get(d);
            }
        }
    }

    /** Flow {@code flow}'s classes in the step into {@code counters}; a note when it arrived re-marked. */
    void report(int flow, Map<String, Long> counters, List<String> notes) {
        int sent = plan.dscpOf(flow);
        if (sent < 0) {
            return;
        }
        counters.put(UdpCounter.DSCP_SENT.key, (long) sent);
        if (classes == null) {
            return;
        }
        long asSent = 0;
        long remarked = 0;
        long seen = 0;
        for (int d = 0; d < StampedReader.UNREAD_CLASS; d++) {
            long n = classes[flow].get(d) - atStepStart[flow][d];
            if (n <= 0) {
                continue;
            }
            seen |= 1L << d;
            if (d == sent) {
                asSent += n;
            } else {
                remarked += n;
            }
        }
        long unread = classes[flow].get(StampedReader.UNREAD_CLASS) - atStepStart[flow][StampedReader.UNREAD_CLASS];
        counters.put(UdpCounter.DSCP_AS_SENT.key, asSent);
        counters.put(UdpCounter.DSCP_REMARKED.key, remarked);
        counters.put(UdpCounter.DSCP_UNREAD.key, unread);
        counters.put(UdpCounter.DSCP_SEEN.key, seen);
        if (remarked > 0) {
            notes.add(remarkedNote(flow, plan.port(flow), sent, seen & ~(1L << sent), remarked, asSent + remarked));
        }
    }

    /** "flow 1 (port 40001) sent EF, arrived as CS0 (re-marked): 500 of 500 datagrams". */
    static String remarkedNote(int flow, int port, int sent, long otherClasses, long remarked, long read) {
        return "flow " + flow + " (port " + port + ") sent " + Dscp.name(sent) + ", arrived as "
            + Dscp.names(otherClasses) + " (re-marked): " + remarked + " of " + read + " datagrams";
    }
}

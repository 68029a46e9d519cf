package io.lossprobe.udp;

import static io.lossprobe.core.transport.CounterDescriptor.Category.DROP;
import static io.lossprobe.core.transport.CounterDescriptor.Category.ERROR;
import static io.lossprobe.core.transport.CounterDescriptor.Category.TRAFFIC;
import static io.lossprobe.core.transport.CounterDescriptor.counter;
import static io.lossprobe.core.transport.CounterDescriptor.gauge;

import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.EchoReplies;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The UDP transport's counters, declared once (see {@link CounterDescriptor}); echo mode's are {@link EchoReplies}'.
 */
final class UdpCounters {
    static final String RECEIVER_SOCKET_DROPS = "udp.receiverSocketDrops";
    static final String SENDER_ERROR_QUEUE_PURGES = "udp.senderErrorQueuePurges";
    static final String SENDER_SOCKET_ERRORS = "udp.senderSocketErrors";
    static final String RECEIVE_GRO = "udp.receiveGro";

    static final List<CounterDescriptor> ALL = EchoReplies.withCounters(CounterDescriptor.concat(List.of(
        counter(RECEIVER_SOCKET_DROPS, DROP, "datagrams",
            "datagrams the receiving host's kernel dropped at the flows' sockets (/proc/net/udp drops)"),
        counter(SENDER_ERROR_QUEUE_PURGES, ERROR, "purges",
            "times a sending socket's error queue (ICMP errors queued by IP_RECVERR) was emptied"),
        counter(SENDER_SOCKET_ERRORS, ERROR, "errors", "errors the sending sockets reported"),
        gauge(RECEIVE_GRO, TRAFFIC, "flag", "1 when the receiving sockets had UDP_GRO on in this step (udp.gro): "
            + "their drops then count coalesced packets, so the socket's share of the loss is an estimate")),
        ClockSteps.RECEIVE.counters(), ClockSteps.REPLIES.counters()));

    private UdpCounters() {
    }

    /**
     * Steps of CLOCK_REALTIME seen by the threads that read with kernel stamps ({@link RealtimeToMonotonic}): the
     * receivers' (requests too, in echo mode) and the echo requester's reader of replies. Reported only when there
     * was something to report.
     */
    enum ClockSteps {
        RECEIVE("udp.clockSteps", "udp.clockStepStamps", "udp.clockStepMaxNs", "receiving", "delays"),
        REPLIES("udp.replyClockSteps", "udp.replyClockStepStamps", "udp.replyClockStepMaxNs",
            "echo replies' reading", "round trips");

        final String steps;
        final String stamps;
        final String largestNs;
        private final String threads;
        private final String figures;

        ClockSteps(String steps, String stamps, String largestNs, String threads, String figures) {
            this.steps = steps;
            this.stamps = stamps;
            this.largestNs = largestNs;
            this.threads = threads;
            this.figures = figures;
        }

        List<CounterDescriptor> counters() {
            return List.of(
                counter(steps, ERROR, "steps", "steps of the realtime clock (CLOCK_REALTIME, which the kernel stamps "
                    + "arrivals on) the " + threads + " threads saw in this step (the most one thread saw)"),
                counter(stamps, ERROR, "stamps", "kernel stamps that could have been taken on either side of a "
                    + "realtime step, given the later of their possible times (their " + figures + " may be long by "
                    + "up to the step, never short), or that fit no step remembered, given the time they were read"),
                gauge(largestNs, ERROR, "ns", "the largest realtime step the " + threads + " threads saw in this "
                    + "step, signed (+: the clock jumped ahead)"));
        }

        /** {@code seen} into a step's counters, and a note in words, when a step or a doubtful stamp was seen. */
        void report(RealtimeToMonotonic.Report seen, Map<String, Long> counters, List<String> notes) {
            if (seen.steps() == 0 && seen.doubtful() == 0) {
                return;
            }
            counters.put(steps, seen.steps());
            counters.put(stamps, seen.doubtful());
            counters.put(largestNs, seen.largestStepNs());
            String what = seen.steps() == 0 ? "after a step of the realtime clock seen earlier"
                : String.format(Locale.ROOT, "CLOCK_REALTIME was stepped while this step ran (%d step(s) seen by "
                + "the %s threads, the largest %+.3f ms)", seen.steps(), threads, seen.largestStepNs() / 1e6);
            notes.add(what + ": the kernel stamps arrivals on that clock, and each stamp is converted with the offset "
                + "of its side of the step; " + effect(seen));
        }

        private String effect(RealtimeToMonotonic.Report seen) {
            if (seen.doubtful() == 0) {
                return "every arrival's side was certain, so no " + figures + " are affected";
            }
            long sided = seen.doubtful() - seen.unexplained();
            String effect = sided == 0 ? "" : String.format(Locale.ROOT, "%d stamp(s) could have been taken on "
                + "either side and were given the later time, so those %s may be long by up to %.3f ms, never "
                + "short", sided, figures, seen.doubtBoundNs() / 1e6);
            return seen.unexplained() == 0 ? effect : effect + (sided == 0 ? "" : "; ") + seen.unexplained()
                + " stamp(s) fit no step remembered and were given the time they were read (the user-space time)";
        }
    }
}

package io.lossprobe.udp;

import static io.lossprobe.core.transport.CounterDescriptor.Category.DROP;
import static io.lossprobe.core.transport.CounterDescriptor.Category.ERROR;
import static io.lossprobe.core.transport.CounterDescriptor.Category.PATH;
import static io.lossprobe.core.transport.CounterDescriptor.Category.TRAFFIC;
import static io.lossprobe.core.transport.CounterDescriptor.Kind.COUNTER;
import static io.lossprobe.core.transport.CounterDescriptor.Kind.GAUGE;

import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.CounterDescriptor.Category;
import io.lossprobe.core.transport.CounterDescriptor.Kind;
import io.lossprobe.core.transport.EchoReplies;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The UDP transport's counters, each declared once: its key and its meaning ({@link CounterDescriptor}) in one
 * constant, which the code that counts it puts by {@link #key}; echo mode's are {@link EchoReplies}'.
 */
enum UdpCounter {
    RECEIVER_SOCKET_DROPS("udp.receiverSocketDrops", COUNTER, DROP, "datagrams",
        "datagrams the receiving host's kernel dropped at the flows' sockets (/proc/net/udp drops)"),
    SENDER_ERROR_QUEUE_PURGES("udp.senderErrorQueuePurges", COUNTER, ERROR, "purges",
        "times a sending socket's error queue (ICMP errors queued by IP_RECVERR) was emptied"),
    SENDER_SOCKET_ERRORS("udp.senderSocketErrors", COUNTER, ERROR, "errors", "errors the sending sockets reported"),
    RECEIVE_GRO("udp.receiveGro", GAUGE, TRAFFIC, "flag", "1 when the receiving sockets had UDP_GRO on in this step "
        + "(udp.gro): their drops then count coalesced packets, so the socket's share of the loss is an estimate"),
    DSCP_SENT("udp.dscpSent", GAUGE, PATH, "dscp", "with --dscp: the traffic class (DSCP 0-63) this flow was "
        + "sent with"),
    DSCP_AS_SENT("udp.dscpAsSent", COUNTER, PATH, "datagrams", "with --dscp: datagrams that arrived with the class "
        + "they were sent with"),
    DSCP_REMARKED("udp.dscpRemarked", COUNTER, PATH, "datagrams", "with --dscp: datagrams that arrived with another "
        + "class than they were sent with (re-marked on the path)"),
    DSCP_UNREAD("udp.dscpUnread", COUNTER, PATH, "datagrams", "with --dscp: datagrams whose arriving class the "
        + "kernel did not give (no IP_TOS / IPV6_TCLASS control message)"),
    DSCP_SEEN("udp.dscpSeen", GAUGE, PATH, "bitmask", "with --dscp: the classes this flow's datagrams arrived with, "
        + "bit d for DSCP d (EF alone is 2^46)"),
    CLOCK_STEPS("udp.clockSteps", COUNTER, ERROR, "steps", stepsMeaning(ClockSteps.RECEIVE_THREADS)),
    CLOCK_STEP_STAMPS("udp.clockStepStamps", COUNTER, ERROR, "stamps", stampsMeaning(ClockSteps.RECEIVE_FIGURES)),
    CLOCK_STEP_MAX_NS("udp.clockStepMaxNs", GAUGE, ERROR, "ns", largestMeaning(ClockSteps.RECEIVE_THREADS)),
    REPLY_CLOCK_STEPS("udp.replyClockSteps", COUNTER, ERROR, "steps", stepsMeaning(ClockSteps.REPLY_THREADS)),
    REPLY_CLOCK_STEP_STAMPS("udp.replyClockStepStamps", COUNTER, ERROR, "stamps",
        stampsMeaning(ClockSteps.REPLY_FIGURES)),
    REPLY_CLOCK_STEP_MAX_NS("udp.replyClockStepMaxNs", GAUGE, ERROR, "ns", largestMeaning(ClockSteps.REPLY_THREADS));

    /** Every UDP counter, in declaration order, and echo mode's {@link EchoReplies#COUNTERS}. */
    static final List<CounterDescriptor> ALL = EchoReplies.withCounters(
        Arrays.stream(values()).map(c -> c.descriptor).toList());

    /** The key its value is put under in a step's and a flow's counters. */
    final String key;
    private final CounterDescriptor descriptor;

    UdpCounter(String key, Kind kind, Category category, String unit, String description) {
        this.key = key;
        this.descriptor = new CounterDescriptor(key, kind, category, unit, description);
    }

    private static String stepsMeaning(String threads) {
        return "steps of the realtime clock (CLOCK_REALTIME, which the kernel stamps arrivals on) the " + threads
            + " threads saw in this step (the most one thread saw)";
    }

    private static String stampsMeaning(String figures) {
        return "kernel stamps that could have been taken on either side of a realtime step, given the later of "
            + "their possible times (their " + figures + " may be long by up to the step, never short), or that "
            + "fit no step remembered, given the time they were read";
    }

    private static String largestMeaning(String threads) {
        return "the largest realtime step the " + threads + " threads saw in this step, signed (+: the clock "
            + "jumped ahead)";
    }

    /**
     * Steps of CLOCK_REALTIME seen by the threads that read with kernel stamps ({@link RealtimeToMonotonic}): the
     * receivers' (requests too, in echo mode) and the echo requester's reader of replies. Reported only when there
     * was something to report.
     */
    enum ClockSteps {
        RECEIVE(CLOCK_STEPS, CLOCK_STEP_STAMPS, CLOCK_STEP_MAX_NS, ClockSteps.RECEIVE_THREADS,
            ClockSteps.RECEIVE_FIGURES),
        REPLIES(REPLY_CLOCK_STEPS, REPLY_CLOCK_STEP_STAMPS, REPLY_CLOCK_STEP_MAX_NS, ClockSteps.REPLY_THREADS,
            ClockSteps.REPLY_FIGURES);

        private static final String RECEIVE_THREADS = "receiving";
        private static final String RECEIVE_FIGURES = "delays";
        private static final String REPLY_THREADS = "echo replies' reading";
        private static final String REPLY_FIGURES = "round trips";

        final String steps;
        final String stamps;
        final String largestNs;
        private final String threads;
        private final String figures;

        ClockSteps(UdpCounter steps, UdpCounter stamps, UdpCounter largestNs, String threads, String figures) {
            this.steps = steps.key;
            this.stamps = stamps.key;
            this.largestNs = largestNs.key;
            this.threads = threads;
            this.figures = figures;
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

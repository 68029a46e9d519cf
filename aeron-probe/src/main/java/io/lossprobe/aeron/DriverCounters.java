package io.lossprobe.aeron;

import static io.aeron.driver.status.SystemCounterDescriptor.BYTES_RECEIVED;
import static io.aeron.driver.status.SystemCounterDescriptor.BYTES_SENT;
import static io.aeron.driver.status.SystemCounterDescriptor.ERRORS;
import static io.aeron.driver.status.SystemCounterDescriptor.FLOW_CONTROL_OVER_RUNS;
import static io.aeron.driver.status.SystemCounterDescriptor.FLOW_CONTROL_UNDER_RUNS;
import static io.aeron.driver.status.SystemCounterDescriptor.HEARTBEATS_RECEIVED;
import static io.aeron.driver.status.SystemCounterDescriptor.HEARTBEATS_SENT;
import static io.aeron.driver.status.SystemCounterDescriptor.INVALID_PACKETS;
import static io.aeron.driver.status.SystemCounterDescriptor.LOSS_GAP_FILLS;
import static io.aeron.driver.status.SystemCounterDescriptor.NAK_MESSAGES_RECEIVED;
import static io.aeron.driver.status.SystemCounterDescriptor.NAK_MESSAGES_SENT;
import static io.aeron.driver.status.SystemCounterDescriptor.RETRANSMITS_SENT;
import static io.aeron.driver.status.SystemCounterDescriptor.RETRANSMITTED_BYTES;
import static io.aeron.driver.status.SystemCounterDescriptor.RETRANSMIT_OVERFLOW;
import static io.aeron.driver.status.SystemCounterDescriptor.SENDER_FLOW_CONTROL_LIMITS;
import static io.aeron.driver.status.SystemCounterDescriptor.SHORT_SENDS;
import static io.aeron.driver.status.SystemCounterDescriptor.STATUS_MESSAGES_RECEIVED;
import static io.aeron.driver.status.SystemCounterDescriptor.STATUS_MESSAGES_SENT;

import io.aeron.driver.status.SystemCounterDescriptor;
import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.CounterDescriptor.Category;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The media driver's system counters that a step reports, as deltas, split by the side that counts them: a
 * receiver reports what its driver's receiver did, a sender what its sender did, so a split run (one driver per
 * host) and the embedded run (one shared driver) report each counter once. {@code aeron.errors} is on both sides;
 * with a shared driver both see the same counter and the receiver's value is the one kept. Each is declared once,
 * here: its key and meaning ({@link #DECLARED}, part of the transport's counters) beside the driver's counter.
 */
final class DriverCounters {
    private static final int SENDS = 1;
    private static final int RECEIVES = 2;

    /** Driver-wide, each side reporting its own; in the order the results list them. */
    private static final List<Entry> ALL = List.of(
        entry(RECEIVES, NAK_MESSAGES_SENT, "aeron.naksSent", Category.OTHER, "naks",
            "NAKs the receiving driver sent, over all its streams"),
        entry(SENDS, NAK_MESSAGES_RECEIVED, "aeron.naksReceived", Category.OTHER, "naks",
            "NAKs the sending driver received, over all its streams"),
        entry(SENDS, RETRANSMITS_SENT, "aeron.retransmitsSent", Category.RETRANSMIT, "retransmits",
            "retransmissions the sending driver made"),
        entry(SENDS, RETRANSMITTED_BYTES, "aeron.retransmittedBytes", Category.TRAFFIC, "bytes",
            "bytes the sending driver resent"),
        entry(SENDS, RETRANSMIT_OVERFLOW, "aeron.retransmitOverflows", Category.ERROR, "retransmits",
            "retransmits the sending driver dropped because too many were pending"),
        entry(SENDS, HEARTBEATS_SENT, "aeron.heartbeatsSent", Category.TRAFFIC, "frames",
            "empty data frames sent while idle"),
        entry(RECEIVES, HEARTBEATS_RECEIVED, "aeron.heartbeatsReceived", Category.TRAFFIC, "frames",
            "empty data frames received"),
        entry(RECEIVES, STATUS_MESSAGES_SENT, "aeron.statusMessagesSent", Category.TRAFFIC, "frames",
            "the receiver's window updates sent"),
        entry(SENDS, STATUS_MESSAGES_RECEIVED, "aeron.statusMessagesReceived", Category.TRAFFIC, "frames",
            "the receiver's window updates received"),
        entry(SENDS, SHORT_SENDS, "aeron.shortSends", Category.BACK_PRESSURE, "sends",
            "sendmsg calls that sent less than asked"),
        entry(SENDS, SENDER_FLOW_CONTROL_LIMITS, "aeron.senderFlowControlLimits", Category.BACK_PRESSURE, "times",
            "times a sender hit the receiver's window and had to wait"),
        entry(SENDS, BYTES_SENT, "aeron.bytesSent", Category.TRAFFIC, "bytes",
            "bytes through the sending driver's sockets"),
        entry(RECEIVES, BYTES_RECEIVED, "aeron.bytesReceived", Category.TRAFFIC, "bytes",
            "bytes through the receiving driver's sockets"),
        entry(SENDS | RECEIVES, ERRORS, "aeron.errors", Category.ERROR, "errors", "errors the driver logged"),
        entry(RECEIVES, LOSS_GAP_FILLS, "aeron.lossGapFills", Category.PATH, "gaps",
            "gaps filled with padding (unreliable mode)"),
        entry(RECEIVES, INVALID_PACKETS, "aeron.invalidPackets", Category.ERROR, "datagrams",
            "datagrams that were not valid Aeron frames"),
        entry(RECEIVES, FLOW_CONTROL_UNDER_RUNS, "aeron.flowControlUnderRuns", Category.OTHER, "frames",
            "data below the receiver's window"),
        entry(RECEIVES, FLOW_CONTROL_OVER_RUNS, "aeron.flowControlOverRuns", Category.OTHER, "frames",
            "data beyond the receiver's window"));

    /** What the sending side reports. */
    static final List<Entry> SENDER = ALL.stream().filter(e -> (e.sides & SENDS) != 0).toList();
    /** What the receiving side reports. */
    static final List<Entry> RECEIVER = ALL.stream().filter(e -> (e.sides & RECEIVES) != 0).toList();
    /** The declarations, each counter once. */
    static final List<CounterDescriptor> DECLARED = ALL.stream().map(Entry::counter).toList();

    private final AeronDriver driver;
    private final List<Entry> entries;
    private final long[] atStepStart;

    DriverCounters(AeronDriver driver, List<Entry> entries) {
        this.driver = driver;
        this.entries = entries;
        this.atStepStart = new long[entries.size()];
    }

    /** Baselines for the deltas: called when the window begins. */
    void mark() {
        for (int i = 0; i < atStepStart.length; i++) {
            atStepStart[i] = driver.system(entries.get(i).descriptor());
        }
    }

    /** The repair counters on this side (NAKs, retransmissions) summed, to tell when they stop moving. */
    long repairSum() {
        long total = 0;
        for (Entry e : entries) {
            SystemCounterDescriptor d = e.descriptor();
            if (d == NAK_MESSAGES_SENT || d == NAK_MESSAGES_RECEIVED || d == RETRANSMITS_SENT) {
                total += driver.system(d);
            }
        }
        return total;
    }

    Map<String, Long> deltas() {
        Map<String, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < atStepStart.length; i++) {
            out.put(entries.get(i).key(), driver.system(entries.get(i).descriptor()) - atStepStart[i]);
        }
        return out;
    }

    private static Entry entry(int sides, SystemCounterDescriptor descriptor, String key, Category category,
                               String unit, String description) {
        return new Entry(sides, CounterDescriptor.counter(key, category, unit, description), descriptor);
    }

    /** A driver counter, the side(s) that report it, and what it means in the results. */
    record Entry(int sides, CounterDescriptor counter, SystemCounterDescriptor descriptor) {
        String key() {
            return counter.key();
        }
    }
}

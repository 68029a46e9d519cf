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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The media driver's system counters that a step reports, as deltas, split by the side that counts them: a
 * receiver reports what its driver's receiver did, a sender what its sender did, so a split run (one driver per
 * host) and the embedded run (one shared driver) report each counter once. {@code aeron.errors} is on both sides;
 * with a shared driver both see the same counter and the receiver's value is the one kept.
 */
final class DriverCounters {
    static final List<Entry> SENDER = List.of(
        new Entry("aeron.naksReceived", NAK_MESSAGES_RECEIVED),
        new Entry("aeron.retransmitsSent", RETRANSMITS_SENT),
        new Entry("aeron.retransmittedBytes", RETRANSMITTED_BYTES),
        new Entry("aeron.retransmitOverflows", RETRANSMIT_OVERFLOW),
        new Entry("aeron.heartbeatsSent", HEARTBEATS_SENT),
        new Entry("aeron.statusMessagesReceived", STATUS_MESSAGES_RECEIVED),
        new Entry("aeron.shortSends", SHORT_SENDS),
        new Entry("aeron.senderFlowControlLimits", SENDER_FLOW_CONTROL_LIMITS),
        new Entry("aeron.bytesSent", BYTES_SENT),
        new Entry("aeron.errors", ERRORS));

    static final List<Entry> RECEIVER = List.of(
        new Entry("aeron.naksSent", NAK_MESSAGES_SENT),
        new Entry("aeron.lossGapFills", LOSS_GAP_FILLS),
        new Entry("aeron.statusMessagesSent", STATUS_MESSAGES_SENT),
        new Entry("aeron.heartbeatsReceived", HEARTBEATS_RECEIVED),
        new Entry("aeron.invalidPackets", INVALID_PACKETS),
        new Entry("aeron.flowControlUnderRuns", FLOW_CONTROL_UNDER_RUNS),
        new Entry("aeron.flowControlOverRuns", FLOW_CONTROL_OVER_RUNS),
        new Entry("aeron.bytesReceived", BYTES_RECEIVED),
        new Entry("aeron.errors", ERRORS));

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

    record Entry(String key, SystemCounterDescriptor descriptor) {
    }
}

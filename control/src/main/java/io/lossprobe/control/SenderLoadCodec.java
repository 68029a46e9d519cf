package io.lossprobe.control;

import io.lossprobe.core.engine.SenderLoad;
import java.util.HashMap;
import java.util.Map;

/**
 * A reverse run's {@link SenderLoad} (what the server's sending cost its thread) across the control channel, inside
 * the send outcome's transport counters under keys of its own, so the message keeps its shape: a server that does not
 * send them leaves the load unknown, and a controller that does not read them sees a few more counters. Each key is
 * declared once here.
 */
final class SenderLoadCodec {
    static final String WINDOW_NS = "sender.windowNs";
    static final String RUN_QUEUE_WAIT_NS = "sender.runQueueWaitNs";
    static final String CPU_NS = "sender.cpuNs";
    static final String SEND_CALL_NS = "sender.sendCallNs";
    static final String HELD_NS = "sender.heldNs";
    static final String BLOCKED_SENDS = "sender.blockedSends";
    static final String HAND_OFFS = "sender.handOffs";
    static final String HAND_OFF_MESSAGES = "sender.handOffMessages";
    static final String LARGEST_HAND_OFF = "sender.largestHandOff";

    private SenderLoadCodec() {
    }

    /** The transport's counters with {@code load}'s figures added (null: unchanged). */
    static Map<String, Long> encode(Map<String, Long> counters, SenderLoad load) {
        if (load == null) {
            return counters;
        }
        Map<String, Long> out = new HashMap<>(counters);
        out.put(WINDOW_NS, load.windowNs());
        if (load.runQueueWaitNs() != null && load.cpuNs() != null) {
            out.put(RUN_QUEUE_WAIT_NS, load.runQueueWaitNs());
            out.put(CPU_NS, load.cpuNs());
        }
        out.put(SEND_CALL_NS, load.sendCallNs());
        out.put(HELD_NS, load.heldNs());
        out.put(BLOCKED_SENDS, load.blockedSends());
        if (load.handOffs() != null && load.handOffMessages() != null && load.largestHandOff() != null) {
            out.put(HAND_OFFS, load.handOffs());
            out.put(HAND_OFF_MESSAGES, load.handOffMessages());
            out.put(LARGEST_HAND_OFF, load.largestHandOff());
        }
        return out;
    }

    /** The load the counters carry (null when they carry none), taking its keys out of {@code counters}. */
    static SenderLoad decode(Map<String, Long> counters) {
        Long window = counters.remove(WINDOW_NS);
        Long wait = counters.remove(RUN_QUEUE_WAIT_NS);
        Long cpu = counters.remove(CPU_NS);
        Long sendCall = counters.remove(SEND_CALL_NS);
        Long held = counters.remove(HELD_NS);
        Long blocked = counters.remove(BLOCKED_SENDS);
        Long handOffs = counters.remove(HAND_OFFS);
        Long handOffMessages = counters.remove(HAND_OFF_MESSAGES);
        Long largest = counters.remove(LARGEST_HAND_OFF);
        if (window == null || sendCall == null || held == null || blocked == null) {
            return null;
        }
        boolean handOffsKnown = handOffs != null && handOffMessages != null && largest != null;
        return new SenderLoad(window, wait, cpu, sendCall, held, blocked, handOffsKnown ? handOffs : null,
            handOffsKnown ? handOffMessages : null, handOffsKnown ? largest : null);
    }
}

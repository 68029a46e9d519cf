package io.lossprobe.aeron;

import static io.lossprobe.core.transport.CounterDescriptor.Category.BACK_PRESSURE;
import static io.lossprobe.core.transport.CounterDescriptor.Category.CONNECTION;
import static io.lossprobe.core.transport.CounterDescriptor.Category.NAK;
import static io.lossprobe.core.transport.CounterDescriptor.Category.OTHER;
import static io.lossprobe.core.transport.CounterDescriptor.Category.PATH;
import static io.lossprobe.core.transport.CounterDescriptor.Category.TRAFFIC;

import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.CounterDescriptor.Category;
import io.lossprobe.core.transport.EchoReplies;
import java.util.Arrays;
import java.util.List;

/**
 * The Aeron transport's own counters, each declared once: its key and its meaning ({@link CounterDescriptor}) in one
 * constant, which the code that counts it puts by {@link #key}; docs/aeron.md explains each. NAKs are counted once
 * per direction from the per-stream counters, which are this run's own: the driver's system counter
 * {@code aeron.naksSent} covers every stream of the driver, and with one driver shared by both sides of an echo run
 * it already holds the reply NAKs.
 */
enum AeronProbeCounter {
    RCV_NAKS_SENT("aeron.rcvNaksSent", NAK, "naks",
        "NAKs sent for this run's request streams (per-stream rcv-naks-sent)"),
    FOREIGN_IMAGES("aeron.foreignImages", OTHER, "images",
        "images of another session than the flow's sender's (spoofed SETUPs), refused"),
    SND_NAKS_RECEIVED("aeron.sndNaksReceived", OTHER, "naks",
        "NAKs received for this run's streams (snd-naks-received)"),
    SND_BPE("aeron.sndBpe", BACK_PRESSURE, "events",
        "back-pressure events the sending driver saw (snd-bpe)"),
    BACK_PRESSURE_EPISODES("aeron.backPressureEpisodes", BACK_PRESSURE, "episodes",
        "runs of back-pressured offers"),
    ADMIN_ACTIONS("aeron.adminActions", BACK_PRESSURE, "offers",
        "offers retried for an admin action (term rotation)"),
    REFUSED_NOT_CONNECTED_OR_CLOSED("aeron.refusedNotConnectedOrClosed", CONNECTION, "messages",
        "offers refused as not connected, closed or past the maximum position (counted in sendFailed)"),
    FC_RECEIVERS("aeron.fcReceivers", CONNECTION, "receivers",
        "multicast, flow control min or tagged: the receivers the publications' flow control counted at the step's "
            + "end (fc-receivers; the least over the flows)"),
    STATUS_SOURCES("aeron.statusSources", CONNECTION, "receivers",
        "multicast: the receivers whose status messages reached the publications in the step (the most over the "
            + "flows)"),
    MESSAGES_ACCEPTED("aeron.messagesAccepted", TRAFFIC, "messages",
        "messages the publications took over the step"),
    DATAGRAMS_SENT("aeron.datagramsSent", TRAFFIC, "datagrams",
        "datagrams the embedded driver sent"),
    DATAGRAMS_RECEIVED("aeron.datagramsReceived", TRAFFIC, "datagrams",
        "datagrams the embedded driver received"),
    LOSS_REPORT_BYTES("aeron.lossReportBytes", PATH, "bytes",
        "bytes the receiving driver found missing (loss report)"),
    LOSS_REPORT_OBSERVATIONS("aeron.lossReportObservations", PATH, "observations",
        "times the receiving driver saw a gap"),
    LOSS_REPORT_FRAMES("aeron.lossReportFrames", PATH, "frames",
        "loss-report bytes divided by the frame length"),
    REPLIES_DROPPED_BACK_PRESSURED("aeron.repliesDroppedBackPressured", OTHER, "messages",
        "the part of echo.repliesDropped dropped for back pressure"),
    REPLIES_DROPPED_NOT_CONNECTED("aeron.repliesDroppedNotConnected", OTHER, "messages",
        "the part of echo.repliesDropped dropped as not connected or closed"),
    REPLY_BACK_PRESSURE_EPISODES("aeron.replyBackPressureEpisodes", BACK_PRESSURE, "episodes",
        "echo mode: runs of back-pressured replies"),
    REPLY_NAKS_SENT("aeron.replyNaksSent", NAK, "naks",
        "echo mode: NAKs the requester sent for the reply streams"),
    REPLY_LOSS_REPORT_BYTES("aeron.replyLossReportBytes", PATH, "bytes",
        "echo mode: bytes found missing on the reply streams");

    /** The driver's system counters ({@link DriverCounters#DECLARED}), these (this run's own streams'), echo mode's. */
    static final List<CounterDescriptor> ALL = EchoReplies.withCounters(
        CounterDescriptor.concat(DriverCounters.DECLARED, Arrays.stream(values()).map(c -> c.descriptor).toList()));

    /** The key its value is put under in a step's and a flow's counters. */
    final String key;
    private final CounterDescriptor descriptor;

    AeronProbeCounter(String key, Category category, String unit, String description) {
        this.key = key;
        this.descriptor = CounterDescriptor.counter(key, category, unit, description);
    }
}

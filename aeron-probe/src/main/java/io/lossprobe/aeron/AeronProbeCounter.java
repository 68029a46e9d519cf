package io.lossprobe.aeron;

import static io.lossprobe.core.transport.CounterDescriptor.Category.BACK_PRESSURE;
import static io.lossprobe.core.transport.CounterDescriptor.Category.CONNECTION;
import static io.lossprobe.core.transport.CounterDescriptor.Category.ERROR;
import static io.lossprobe.core.transport.CounterDescriptor.Category.NAK;
import static io.lossprobe.core.transport.CounterDescriptor.Category.OTHER;
import static io.lossprobe.core.transport.CounterDescriptor.Category.PATH;
import static io.lossprobe.core.transport.CounterDescriptor.Category.RETRANSMIT;
import static io.lossprobe.core.transport.CounterDescriptor.Category.TRAFFIC;
import static io.lossprobe.core.transport.CounterDescriptor.counter;

import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.EchoReplies;
import java.util.List;

/**
 * The Aeron transport's counters, declared once (see {@link CounterDescriptor}); docs/aeron.md explains each. NAKs
 * are counted once per direction from the per-stream counters, which are this run's own: the driver's system
 * counter {@code aeron.naksSent} covers every stream of the driver, and with one driver shared by both sides of an
 * echo run it already holds the reply NAKs.
 */
final class AeronProbeCounters {
    static final String RCV_NAKS_SENT = "aeron.rcvNaksSent";
    static final String SND_NAKS_RECEIVED = "aeron.sndNaksReceived";
    static final String SND_BPE = "aeron.sndBpe";
    static final String BACK_PRESSURE_EPISODES = "aeron.backPressureEpisodes";
    static final String ADMIN_ACTIONS = "aeron.adminActions";
    static final String REFUSED_NOT_CONNECTED_OR_CLOSED = "aeron.refusedNotConnectedOrClosed";
    static final String MESSAGES_ACCEPTED = "aeron.messagesAccepted";
    static final String DATAGRAMS_SENT = "aeron.datagramsSent";
    static final String DATAGRAMS_RECEIVED = "aeron.datagramsReceived";
    static final String LOSS_REPORT_BYTES = "aeron.lossReportBytes";
    static final String LOSS_REPORT_OBSERVATIONS = "aeron.lossReportObservations";
    static final String LOSS_REPORT_FRAMES = "aeron.lossReportFrames";
    static final String REPLIES_DROPPED_BACK_PRESSURED = "aeron.repliesDroppedBackPressured";
    static final String REPLIES_DROPPED_NOT_CONNECTED = "aeron.repliesDroppedNotConnected";
    static final String REPLY_BACK_PRESSURE_EPISODES = "aeron.replyBackPressureEpisodes";
    static final String REPLY_NAKS_SENT = "aeron.replyNaksSent";
    static final String REPLY_LOSS_REPORT_BYTES = "aeron.replyLossReportBytes";

    /** The driver's system counters ({@link DriverCounters#DECLARED}), this run's own streams', echo mode's. */
    static final List<CounterDescriptor> ALL = EchoReplies.withCounters(CounterDescriptor.concat(
        DriverCounters.DECLARED, List.of(
        counter(RCV_NAKS_SENT, NAK, "naks", "NAKs sent for this run's request streams (per-stream rcv-naks-sent)"),
        counter(SND_NAKS_RECEIVED, OTHER, "naks", "NAKs received for this run's streams (snd-naks-received)"),
        counter(SND_BPE, BACK_PRESSURE, "events", "back-pressure events the sending driver saw (snd-bpe)"),
        counter(BACK_PRESSURE_EPISODES, BACK_PRESSURE, "episodes", "runs of back-pressured offers"),
        counter(ADMIN_ACTIONS, BACK_PRESSURE, "offers", "offers retried for an admin action (term rotation)"),
        counter(REFUSED_NOT_CONNECTED_OR_CLOSED, CONNECTION, "messages",
            "offers refused as not connected, closed or past the maximum position (counted in sendFailed)"),
        counter(MESSAGES_ACCEPTED, TRAFFIC, "messages", "messages the publications took over the step"),
        counter(DATAGRAMS_SENT, TRAFFIC, "datagrams", "datagrams the embedded driver sent"),
        counter(DATAGRAMS_RECEIVED, TRAFFIC, "datagrams", "datagrams the embedded driver received"),
        counter(LOSS_REPORT_BYTES, PATH, "bytes", "bytes the receiving driver found missing (loss report)"),
        counter(LOSS_REPORT_OBSERVATIONS, PATH, "observations", "times the receiving driver saw a gap"),
        counter(LOSS_REPORT_FRAMES, PATH, "frames", "loss-report bytes divided by the frame length"),
        counter(REPLIES_DROPPED_BACK_PRESSURED, OTHER, "messages",
            "the part of echo.repliesDropped dropped for back pressure"),
        counter(REPLIES_DROPPED_NOT_CONNECTED, OTHER, "messages",
            "the part of echo.repliesDropped dropped as not connected or closed"),
        counter(REPLY_BACK_PRESSURE_EPISODES, BACK_PRESSURE, "episodes", "echo mode: runs of back-pressured replies"),
        counter(REPLY_NAKS_SENT, NAK, "naks", "echo mode: NAKs the requester sent for the reply streams"),
        counter(REPLY_LOSS_REPORT_BYTES, PATH, "bytes", "echo mode: bytes found missing on the reply streams"))));

    private AeronProbeCounters() {
    }
}

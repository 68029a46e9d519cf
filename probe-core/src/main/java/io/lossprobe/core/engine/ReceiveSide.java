package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.result.Cpu;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.TransportReport;
import java.util.Map;

/**
 * The receiving half of one transport's run as the engine sees it: in this process ({@link LocalReceiveSide}) or
 * on another host behind the control channel. The engine drives the sending half itself.
 */
public interface ReceiveSide extends AutoCloseable {
    /** Socket buffers granted and similar facts, for the results' environment. */
    Map<String, Long> environment();

    /**
     * Starts a step's accounting on every flow, with each flow's tracking window; each flow skips the sequence
     * numbers the senders' failure ledger records (read as they are added, until the step closes), and corrects
     * every delay by the step's clock offset (0 on one host). Receivers on another host are told the step's rate
     * and window, and derive its tracking windows and intervals from them there (a step of a rate search has a rate
     * no level of the plan has).
     */
    void beginStep(StepStart start) throws Exception;

    /**
     * Counts the step just begun per interval as well ({@code --interval}): {@code intervals} of
     * {@code intervalNs} from {@code windowStartNs} on the senders' clock, the last taking every later intended
     * time. Called after {@link #beginStep} and before the senders start.
     */
    default void countIntervals(long windowStartNs, long intervalNs, int intervals) throws Exception {
        throw new UnsupportedOperationException("these receivers do not count per interval");
    }

    /**
     * Records the step just begun message by message as well ({@code --packets}): every {@code every}-th sequence
     * number, {@code capacity} per flow at most; returns each flow's record (read once the receivers closed). Called
     * after {@link #beginStep} and before the senders start.
     */
    default io.lossprobe.core.accounting.PacketSlots[] capturePackets(int every, int capacity) throws Exception {
        throw new UnsupportedOperationException("these receivers do not record packets");
    }

    /** The other host's clock minus this one's, estimated now; null when the receivers are in this process. */
    default io.lossprobe.core.result.ClockOffset clockOffset() throws Exception {
        return null;
    }

    /** The window started: sample the counters whose deltas the step reports. Called on the engine's thread. */
    void beginWindow() throws Exception;

    /** Distinct messages each flow received so far in the open step. */
    long[] progress() throws Exception;

    /**
     * Closes the step: every flow's wire sequence numbers below {@code wireEnd[i]} are now received, lost, or
     * skipped as failed.
     */
    Receipt closeStep(int step, long[] wireEnd) throws Exception;

    /**
     * As {@link #closeStep(int, long[])}; with {@code lostSets} every flow's summary carries its lost numbers
     * ({@link FlowReceiver.Summary#lostSet}, {@link io.lossprobe.core.accounting.LostSet#UNKNOWN} past the bound),
     * which a multicast step composes over its receivers. Receivers in this process always carry them.
     */
    default Receipt closeStep(int step, long[] wireEnd, boolean lostSets) throws Exception {
        return closeStep(step, wireEnd);
    }

    /** Arrivals for a closed step that came after it closed, per flow: first arrivals and duplicates. */
    Late lateAfterClose(int step) throws Exception;

    /** Late arrivals per flow: first arrivals (part of lost) and duplicates. */
    record Late(long[] first, long[] duplicates) {
    }

    /** Echo mode test seam: replies the filter picks are never sent (local receivers only). */
    default void replyFilter(io.lossprobe.core.accounting.SendFilter filter) {
        throw new UnsupportedOperationException("reply filters need local receivers");
    }

    /**
     * What a run with several receivers (multicast) names this one by: its host's address when it is on another
     * host; null in this process (the run then numbers it).
     */
    default String name() {
        return null;
    }

    /** The local endpoint, for test hooks; null when the receivers are remote. */
    ReceiverEndpoint localEndpoint();

    @Override
    void close() throws Exception;

    /**
     * What the receiving side reports for a step.
     *
     * @param hostCounters the receiving host's counter deltas when it is another host (null when local: the
     *                     engine's own sample covers both ends)
     * @param cpu          the receiving host's CPU when it is another host, else null
     * @param intervals    the step's receive counts per interval over all flows ({@link #countIntervals}), else null
     */
    record Receipt(FlowReceiver.Summary[] flows, TransportReport report, Map<String, Long> hostCounters, Cpu cpu,
                   io.lossprobe.core.accounting.ReceivedIntervals intervals) {
        public Receipt(FlowReceiver.Summary[] flows, TransportReport report, Map<String, Long> hostCounters,
                       Cpu cpu) {
            this(flows, report, hostCounters, cpu, null);
        }
    }
}

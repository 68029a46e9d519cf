package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The union over a multicast step's receivers (docs/multicast.md#the-union-over-receivers), from each receiver's
 * lost sequence numbers per flow: which messages every receiver got, and which at least one got. With
 * {@code lost_i} receiver i's {@code lost}, these hold exactly, flow by flow and over the step:
 *
 * <pre>
 * allReceived + lostAnywhere == sent        anyReceived + lostAtAll == sent
 * lostAtAll + lostAtSome == lostAnywhere    lostAtAll &lt;= min lost_i
 * max lost_i &lt;= lostAnywhere &lt;= min(sent, sum lost_i)
 * </pre>
 *
 * <p>A message lost at every receiver ({@code lostAtAll}) was lost before the group fanned out (by the sender's
 * host or the network before the first branch), or by every receiver alike; one lost at some but not all
 * ({@code lostAtSome}) was lost on a receiver's own branch or host.
 *
 * <p>Where a receiver's lost set of a flow is not known (more loss ranges than it keeps, see
 * {@link io.lossprobe.core.accounting.LostSet}) or disagrees with its {@code lost}, the flow's union is not
 * {@code exact}: its figures are absent (never estimated) and {@code unknown} says why; the step's figures are then
 * absent too.
 *
 * @param receivers    how many receivers the union is over
 * @param sent         messages sent (the sender's, the same for every receiver)
 * @param allReceived  messages every receiver received: {@code sent - lostAnywhere}
 * @param anyReceived  messages at least one receiver received: {@code sent - lostAtAll}
 * @param lostAnywhere messages lost by at least one receiver: the size of the union of the lost sets
 * @param lostAtAll    messages lost by every receiver: the size of the intersection of the lost sets
 * @param lostAtSome   messages lost by some receivers and received by others: {@code lostAnywhere - lostAtAll}
 * @param exact        whether the figures are known exactly (else they are absent)
 * @param flows        the same per flow, in flow order
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReceiverUnion(int receivers, long sent, Long allReceived, Long anyReceived, Long lostAnywhere,
                            Long lostAtAll, Long lostAtSome, boolean exact, List<Flow> flows) {
    public ReceiverUnion {
        flows = List.copyOf(flows);
    }

    /** The step's union: the flows' summed, when every flow's is exact. */
    public static ReceiverUnion of(int receivers, List<Flow> flows) {
        long sent = 0;
        long anywhere = 0;
        long atAll = 0;
        boolean exact = true;
        for (Flow f : flows) {
            sent += f.sent();
            if (f.exact()) {
                anywhere += f.lostAnywhere();
                atAll += f.lostAtAll();
            } else {
                exact = false;
            }
        }
        if (!exact) {
            return new ReceiverUnion(receivers, sent, null, null, null, null, null, false, flows);
        }
        return new ReceiverUnion(receivers, sent, sent - anywhere, sent - atAll, anywhere, atAll, anywhere - atAll,
            true, flows);
    }

    /**
     * One flow's union.
     *
     * @param unknown why the figures are absent, when not {@code exact}
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Flow(int flow, int port, long sent, Long allReceived, Long anyReceived, Long lostAnywhere,
                       Long lostAtAll, Long lostAtSome, boolean exact, String unknown) {
        /** The flow's union from the size of the union ({@code anywhere}) and intersection ({@code atAll}). */
        public static Flow of(int flow, int port, long sent, long anywhere, long atAll) {
            return new Flow(flow, port, sent, sent - anywhere, sent - atAll, anywhere, atAll, anywhere - atAll, true,
                null);
        }

        /** A flow whose union is not known, and why. */
        public static Flow unknown(int flow, int port, long sent, String why) {
            return new Flow(flow, port, sent, null, null, null, null, null, false, why);
        }
    }
}

package io.lossprobe.core.engine;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * A multicast run's receivers across its passes (one per transport and message size): each pass opens every
 * receiver anew, as a {@link MulticastReceiveSide}. A receiver that cannot open before the run's first traffic
 * fails the run (nothing was measured yet, and the user learns at once); one lost in a pass, or that cannot open
 * for a later pass, stays lost for the rest of the run.
 */
final class LostReceivers {
    private final RunListener listener;
    /** Each receiver's side in the latest pass, by index. */
    private final Map<Integer, MulticastReceiveSide> latest = new HashMap<>();

    LostReceivers(RunListener listener) {
        this.listener = listener;
    }

    /** Receiver {@code i} of this pass, opened from {@code factory} unless it was lost before. */
    MulticastReceiveSide open(int i, ReceiveSideFactory factory, Transport transport, Plan pass, int runId,
                              MessageAuth auth, Map<String, String> options) throws Exception {
        MulticastReceiveSide before = latest.get(i);
        MulticastReceiveSide now;
        if (before != null && before.gone() != null) {
            now = MulticastReceiveSide.gone(before.name(), before.gone(), transport.name(), pass, runId, auth);
        } else {
            try {
                now = MulticastReceiveSide.of(factory.open(transport, pass, runId, auth, options),
                    "receiver " + (i + 1), transport.name(), pass, runId, auth, listener);
            } catch (IOException e) {
                if (before == null) {
                    throw e; // before any traffic: the run is refused
                }
                String why = "opening for " + transport.name() + " " + pass.messageSize() + " B: " + e.getMessage();
                listener.receiverGone(before.name(), why);
                now = MulticastReceiveSide.gone(before.name(), why, transport.name(), pass, runId, auth);
            }
        }
        latest.put(i, now);
        return now;
    }
}

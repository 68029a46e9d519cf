package io.lossprobe.core.engine;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.StepResult;
import java.util.List;

/**
 * A finished step and the receive sides that keep counting its late arrivals until they close: summed over the
 * sides, or, a multicast step's ({@link StepResult#receivers()}), each receiver's for its own counts.
 */
final class CompletedStep {
    private final StepResult result;
    private List<ReceiveSide> receivers;
    private ReceiveSide.Late lateAfterClose;
    /** A multicast step: each receiver's late arrivals since the close, in the receivers' order; else null. */
    private List<ReceiveSide.Late> lateEach;

    CompletedStep(StepResult result, List<ReceiveSide> receivers) {
        this.result = result;
        this.receivers = receivers;
        int flows = result.flows().size();
        this.lateAfterClose = new ReceiveSide.Late(new long[flows], new long[flows]);
        if (result.receivers() != null) {
            lateEach = new java.util.ArrayList<>();
            for (int i = 0; i < result.receivers().size(); i++) {
                lateEach.add(new ReceiveSide.Late(new long[flows], new long[flows]));
            }
        }
    }

    void freeze() {
        refresh();
        receivers = null;
    }

    private void refresh() {
        if (receivers != null) {
            try {
                if (lateEach != null) {
                    lateEach = StepSides.lateEach(receivers, result.step());
                } else {
                    lateAfterClose = StepSides.lateAfterClose(receivers, result.step());
                }
            } catch (Exception e) {
                // Keep the last counts we had; the result stays valid without the newest stragglers.
            }
        }
    }

    StepResult withLateSoFar() {
        refresh();
        if (lateEach != null) {
            return multicastWithLateSoFar();
        }
        ReceiveSide.Late late = withLate(result.flows(), lateAfterClose);
        return result.withLate(late.first(), late.duplicates());
    }

    /** Each receiver with its own late arrivals; the step's own figures are the worst receiver's, as at the close. */
    private StepResult multicastWithLateSoFar() {
        List<io.lossprobe.core.result.ReceiverResult> updated = new java.util.ArrayList<>();
        ReceiveSide.Late worst = null;
        for (int r = 0; r < lateEach.size(); r++) {
            io.lossprobe.core.result.ReceiverResult receiver = result.receivers().get(r);
            ReceiveSide.Late late = withLate(receiver.flows(), lateEach.get(r));
            updated.add(receiver.withLate(late.first(), late.duplicates()));
            if (receiver.receiver().equals(result.worstReceiver())) {
                worst = late;
            }
        }
        StepResult top = worst == null ? result : result.withLate(worst.first(), worst.duplicates());
        return top.withReceivers(updated, result.worstReceiver());
    }

    /** Each flow's late counts at the close plus those since. */
    private static ReceiveSide.Late withLate(List<io.lossprobe.core.result.FlowResult> flows,
                                             ReceiveSide.Late since) {
        long[] late = new long[flows.size()];
        long[] duplicates = new long[late.length];
        for (int i = 0; i < late.length; i++) {
            Counts c = flows.get(i).counts();
            late[i] = c.late() + since.first()[i];
            duplicates[i] = c.lateDuplicates() + since.duplicates()[i];
        }
        return new ReceiveSide.Late(late, duplicates);
    }
}

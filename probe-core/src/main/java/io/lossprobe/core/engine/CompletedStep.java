package io.lossprobe.core.engine;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.StepResult;
import java.util.List;

/** A finished step and the receive sides that keep counting its late arrivals until they close. */
final class CompletedStep {
    private final StepResult result;
    private List<ReceiveSide> receivers;
    private ReceiveSide.Late lateAfterClose;

    CompletedStep(StepResult result, List<ReceiveSide> receivers) {
        this.result = result;
        this.receivers = receivers;
        int flows = result.flows().size();
        this.lateAfterClose = new ReceiveSide.Late(new long[flows], new long[flows]);
    }

    void freeze() {
        refresh();
        receivers = null;
    }

    private void refresh() {
        if (receivers != null) {
            try {
                lateAfterClose = StepSides.lateAfterClose(receivers, result.step());
            } catch (Exception e) {
                // Keep the last counts we had; the result stays valid without the newest stragglers.
            }
        }
    }

    StepResult withLateSoFar() {
        refresh();
        long[] late = new long[result.flows().size()];
        long[] duplicates = new long[late.length];
        for (int i = 0; i < late.length; i++) {
            Counts c = result.flows().get(i).counts();
            late[i] = c.late() + lateAfterClose.first()[i];
            duplicates[i] = c.lateDuplicates() + lateAfterClose.duplicates()[i];
        }
        return result.withLate(late, duplicates);
    }
}

package io.lossprobe.core.engine;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.StepResult;

/** A finished step and the receivers that keep counting its late arrivals until they close. */
final class CompletedStep {
    private final StepResult result;
    private ReceiveSide receiver;
    private ReceiveSide.Late lateAfterClose;

    CompletedStep(StepResult result, ReceiveSide receiver) {
        this.result = result;
        this.receiver = receiver;
        int flows = result.flows().size();
        this.lateAfterClose = new ReceiveSide.Late(new long[flows], new long[flows]);
    }

    void freeze() {
        refresh();
        receiver = null;
    }

    private void refresh() {
        if (receiver != null) {
            try {
                lateAfterClose = receiver.lateAfterClose(result.step());
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

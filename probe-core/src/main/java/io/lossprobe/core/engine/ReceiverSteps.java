package io.lossprobe.core.engine;

import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.List;

/**
 * A multicast step from its receivers' own (docs/multicast.md): each receiver was sent every flow, and its result
 * is built as a unicast step's is. The step shows the worst receiver's figures, so every report, check and
 * comparison that reads a step reads the receiver that did worst, and lists every receiver's own counts beside them.
 */
final class ReceiverSteps {
    private ReceiverSteps() {
    }

    /** The index of the worst receiver's step: the most lost, the first of those that lost as much. */
    static int worst(List<StepResult> each) {
        int worst = 0;
        for (int i = 1; i < each.size(); i++) {
            if (each.get(i).counts().lost() > each.get(worst).counts().lost()) {
                worst = i;
            }
        }
        return worst;
    }

    /**
     * The worst receiver's step, listing every receiver's counts.
     *
     * @param names        each receiver's name, in the steps' order
     * @param clockOffsets the receivers are on other hosts, whose delays are corrected by one clock estimate
     */
    static StepResult compose(List<String> names, List<StepResult> each, boolean clockOffsets) {
        List<ReceiverResult> receivers = new ArrayList<>();
        for (int i = 0; i < each.size(); i++) {
            receivers.add(ReceiverResult.of(names.get(i), each.get(i)));
        }
        int worst = worst(each);
        StepResult step = each.get(worst);
        if (clockOffsets && each.size() > 1) {
            // One estimate is made per step, against the first receiver's host: on one host (a lab's namespaces
            // share a clock) that is every receiver's clock; between hosts only the first's delays are one-way.
            List<String> warnings = new ArrayList<>(step.warnings());
            warnings.add("the receivers' delays are corrected by the clock offset of " + names.get(0)
                + " alone: on other hosts than its, they are one-way delays only if the clocks agree");
            step = step.withWarnings(warnings);
        }
        return step.withReceivers(receivers, names.get(worst));
    }
}

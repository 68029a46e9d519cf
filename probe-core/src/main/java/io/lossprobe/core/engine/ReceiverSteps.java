package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.LostSet;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.ReceiverUnion;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.List;

/**
 * A multicast step from its receivers' own (docs/multicast.md): each receiver was sent every flow, and its result
 * is built as a unicast step's is. The step shows the worst receiver's figures, so every report, check and
 * comparison that reads a step reads the receiver that did worst, and lists every receiver's own counts beside them,
 * and the union over them ({@link ReceiverUnion}) from their lost sets.
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
     * The worst receiver's step, listing every receiver's counts and the union over them.
     *
     * @param names        each receiver's name, in the steps' order
     * @param lostSets     each receiver's flows' summaries, in the steps' order, for their lost sets
     * @param clockOffsets the receivers are on other hosts, whose delays are corrected by one clock estimate
     */
    static StepResult compose(List<String> names, List<StepResult> each, List<FlowReceiver.Summary[]> lostSets,
                              boolean clockOffsets) {
        List<ReceiverResult> receivers = new ArrayList<>();
        for (int i = 0; i < each.size(); i++) {
            receivers.add(ReceiverResult.of(names.get(i), each.get(i)));
        }
        int worst = worst(each);
        StepResult step = each.get(worst);
        ReceiverUnion union = union(names, each, lostSets);
        List<String> unknown = new ArrayList<>();
        for (ReceiverUnion.Flow f : union.flows()) {
            if (!f.exact()) {
                unknown.add("flow " + f.flow() + ": " + f.unknown());
            }
        }
        if (!unknown.isEmpty()) {
            List<String> warnings = new ArrayList<>(step.warnings());
            warnings.add("the union over the receivers is unknown on " + unknown.size() + " flow(s): "
                + String.join("; ", unknown.subList(0, Math.min(3, unknown.size())))
                + (unknown.size() > 3 ? "; ..." : ""));
            step = step.withWarnings(warnings);
        }
        if (clockOffsets && each.size() > 1) {
            // One estimate is made per step, against the first receiver's host: on one host (a lab's namespaces
            // share a clock) that is every receiver's clock; between hosts only the first's delays are one-way.
            List<String> warnings = new ArrayList<>(step.warnings());
            warnings.add("the receivers' delays are corrected by the clock offset of " + names.get(0)
                + " alone: on other hosts than its, they are one-way delays only if the clocks agree");
            step = step.withWarnings(warnings);
        }
        return step.withReceivers(receivers, names.get(worst)).withUnion(union);
    }

    /**
     * The union over the receivers, flow by flow, from their lost sets: a flow's is exact when every receiver's set
     * of it is known and holds exactly its {@code lost} numbers (anything else would make the identities fail).
     */
    static ReceiverUnion union(List<String> names, List<StepResult> each, List<FlowReceiver.Summary[]> lostSets) {
        List<ReceiverUnion.Flow> flows = new ArrayList<>();
        List<FlowResult> first = each.get(0).flows();
        for (int i = 0; i < first.size(); i++) {
            FlowResult flow = first.get(i);
            long sent = flow.counts().sent();
            List<LostSet> sets = new ArrayList<>();
            String why = null;
            for (int r = 0; r < each.size() && why == null; r++) {
                LostSet set = lostSets.get(r)[i].lostSet();
                long lost = each.get(r).flows().get(i).counts().lost();
                if (set == null) {
                    why = names.get(r) + " gave no lost set";
                } else if (!set.known()) {
                    why = names.get(r) + " lost in more than " + LostSet.MAX_RANGES + " ranges, more than it keeps";
                } else if (set.count() != lost) {
                    why = names.get(r) + "'s lost set holds " + set.count() + " numbers where it lost " + lost;
                } else {
                    sets.add(set);
                }
            }
            if (why != null) {
                flows.add(ReceiverUnion.Flow.unknown(flow.flow(), flow.port(), sent, why));
            } else {
                LostSet.Overlap o = LostSet.overlap(sets);
                flows.add(ReceiverUnion.Flow.of(flow.flow(), flow.port(), sent, o.anywhere(), o.atAll()));
            }
        }
        return ReceiverUnion.of(each.size(), flows);
    }
}

package io.lossprobe.analysis;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A multicast step as a receiver-by-flow matrix (docs/multicast.md): a row per receiver, a column per flow, each cell
 * that receiver's loss on that flow ({@code lost / loss %} of sent), with each receiver's total over its flows (last
 * column) and each flow's total over the receivers (last row). The worst receiver, whose figures the step shows, is
 * marked. A lossy receiver is a red row, a flow lost at every receiver (the sender's or the group's problem) a column
 * of loss. Nothing for a step without receivers, so a unicast report is unchanged.
 */
public final class ReceiverMatrix {
    /** Written after the worst receiver's name. */
    static final String WORST = " (worst)";

    private ReceiverMatrix() {
    }

    /** Whether some step of {@code run} is a multicast step. */
    static boolean any(List<StepResult> steps) {
        return steps.stream().anyMatch(s -> s.receivers() != null && !s.receivers().isEmpty());
    }

    /** {@code lost / loss %} of {@code sent} ("" when nothing was sent). */
    static String cell(long lost, long sent) {
        return sent == 0 ? "" : String.format(Locale.ROOT, "%,d / %s%%", lost, Fmt.num(100.0 * lost / sent, 3));
    }

    /**
     * The matrix of one step as rows of text: a header row, a row per receiver, then the flows' totals, and with the
     * union over the receivers, what was lost at every receiver and what at some only.
     */
    static List<String[]> rows(StepResult s) {
        List<ReceiverResult> rs = s.receivers();
        List<FlowResult> flows = rs.get(0).flows();
        List<String[]> out = new ArrayList<>();
        String[] head = new String[flows.size() + 2];
        head[0] = "receiver \\ flow";
        for (int f = 0; f < flows.size(); f++) {
            head[f + 1] = "flow " + flows.get(f).flow() + " (port " + flows.get(f).port() + ")";
        }
        head[head.length - 1] = "all flows";
        out.add(head);
        long[] sent = new long[flows.size() + 1];
        long[] lost = new long[flows.size() + 1];
        for (ReceiverResult r : rs) {
            String[] row = new String[head.length];
            row[0] = r.receiver() + (r.receiver().equals(s.worstReceiver()) ? WORST : "");
            for (int f = 0; f < flows.size(); f++) {
                Counts c = f < r.flows().size() ? r.flows().get(f).counts() : null;
                row[f + 1] = c == null ? "" : cell(c.lost(), c.sent());
                if (c != null) {
                    sent[f] += c.sent();
                    lost[f] += c.lost();
                }
            }
            row[head.length - 1] = cell(r.counts().lost(), r.counts().sent());
            sent[flows.size()] += r.counts().sent();
            lost[flows.size()] += r.counts().lost();
            out.add(row);
        }
        String[] total = new String[head.length];
        total[0] = "all receivers";
        for (int i = 0; i < sent.length; i++) {
            total[i + 1] = cell(lost[i], sent[i]);
        }
        out.add(total);
        if (s.union() != null) {
            out.add(unionRow(s, flows, "lost at every receiver", true));
            out.add(unionRow(s, flows, "lost at some receivers only", false));
        }
        return out;
    }

    /** A union row: each flow's messages lost at all receivers ({@code atAll}), or at some only, of sent. */
    private static String[] unionRow(StepResult s, List<FlowResult> flows, String label, boolean atAll) {
        io.lossprobe.core.result.ReceiverUnion u = s.union();
        String[] row = new String[flows.size() + 2];
        row[0] = label;
        for (int f = 0; f < flows.size(); f++) {
            io.lossprobe.core.result.ReceiverUnion.Flow uf = f < u.flows().size() ? u.flows().get(f) : null;
            row[f + 1] = uf == null ? "" : !uf.exact() ? "unknown"
                : cell(atAll ? uf.lostAtAll() : uf.lostAtSome(), uf.sent());
        }
        row[row.length - 1] = !u.exact() ? "unknown" : cell(atAll ? u.lostAtAll() : u.lostAtSome(), u.sent());
        return row;
    }

    /** The title of a step's matrix: its series and level ("udp 20k: 3 receivers, 4 flows"). */
    static String title(StepResult s, boolean sized) {
        return s.series() + " " + Comparison.label(s, sized) + ": " + s.receivers().size() + " receivers, "
            + s.receivers().get(0).flows().size() + " flows";
    }

    /** The HTML section over the multicast steps of {@code run}; nothing when it has none. */
    static void html(StringBuilder sb, LoadedResult run) {
        List<StepResult> steps = run.run().steps();
        if (!any(steps)) {
            return;
        }
        sb.append("<h2 id=\"receivers\">Receivers by flow</h2>\n<p class=\"meta\">A multicast step: each receiver "
            + "counted every flow on its own. Each cell: that receiver's messages lost on that flow / loss % of "
            + "sent; the last column is the receiver over all flows, the row \"all receivers\" the flow over all "
            + "receivers. The union rows split what was lost: at every receiver (before the group fanned out, or by "
            + "all alike), or at some receivers only. The step's figures above are its worst receiver's, marked"
            + WORST + ".</p>\n");
        int i = 0;
        for (StepResult s : steps) {
            if (s.receivers() == null || s.receivers().isEmpty()) {
                continue;
            }
            sb.append("<h3>").append(Fmt.html(title(s, run.sized()))).append("</h3>\n<table class=\"summary "
                + "receivers\" id=\"receivers-").append(i++).append("\">\n");
            List<String[]> rows = rows(s);
            for (int r = 0; r < rows.size(); r++) {
                boolean head = r == 0;
                boolean receiver = !head && r <= s.receivers().size();
                boolean lossy = receiver && s.receivers().get(r - 1).counts().lost() > 0;
                sb.append(head ? "<thead><tr>" : lossy ? "<tr class=\"lossy\">" : "<tr>");
                String[] row = rows.get(r);
                for (int c = 0; c < row.length; c++) {
                    boolean name = head || c == 0;
                    String text = Fmt.html(row[c]);
                    boolean worst = c == 0 && receiver
                        && s.receivers().get(r - 1).receiver().equals(s.worstReceiver());
                    sb.append(name ? "<th>" : "<td class=\"n\">").append(worst ? "<b>" + text + "</b>" : text)
                        .append(name ? "</th>" : "</td>");
                }
                sb.append(head ? "</tr></thead>\n<tbody>\n" : "</tr>\n");
            }
            sb.append("</tbody>\n</table>\n");
        }
    }

    /** The matrices of every run's multicast steps as Markdown tables; "" when no step is a multicast step. */
    static String markdown(List<LoadedResult> results) {
        StringBuilder sb = new StringBuilder();
        boolean sized = results.stream().anyMatch(LoadedResult::sized);
        for (LoadedResult run : results) {
            for (StepResult s : run.run().steps()) {
                if (s.receivers() == null || s.receivers().isEmpty()) {
                    continue;
                }
                sb.append("\n## ").append(Fmt.markdown(title(s, sized)))
                    .append(results.size() > 1 ? " (" + Fmt.markdown(run.file().toString()) + ")" : "")
                    .append(": lost / loss % per receiver and flow\n\n");
                List<String[]> rows = rows(s);
                for (int r = 0; r < rows.size(); r++) {
                    sb.append('|');
                    for (String cell : rows.get(r)) {
                        sb.append(' ').append(Fmt.markdown(cell)).append(" |");
                    }
                    sb.append('\n');
                    if (r == 0) {
                        sb.append("|---|").append("---:|".repeat(rows.get(0).length - 1)).append('\n');
                    }
                }
            }
        }
        return sb.toString();
    }

    /** {@code lossprobe report --format md}: the summary table, then the receiver-by-flow matrices of multicast. */
    public static String reportMarkdown(List<LoadedResult> results) {
        return SummaryTable.of(results).markdown() + markdown(results);
    }
}

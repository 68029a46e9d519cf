package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A step's warnings in words, in the order a reader meets them: the transports' own notes, the broken identities,
 * then what the counts and the counters' timing say about the step's figures.
 */
final class StepWarnings {
    /**
     * A window-start counter sample finishing later than this after the window began is worth a warning, unless
     * no loss counter moved across it ({@link WindowSample#skewMatters()}).
     */
    static final long WINDOW_SKEW_WARN_NS = TimeUnit.MILLISECONDS.toNanos(20);

    private final List<String> lines = new ArrayList<>();

    /** Starts with the sending and receiving transports' notes and the identity checks that failed. */
    StepWarnings(TransportReport txReport, TransportReport rxReport, IdentityChecks checks) {
        lines.addAll(txReport.notes());
        lines.addAll(rxReport.notes());
        lines.addAll(checks.warnings());
    }

    /** What the step's counts say about who sent and what could not be recorded or sampled in time. */
    void counts(Counts totals, FailedRanges[] failures, long failedAfterClose, WindowSample window) {
        if (totals.foreign() > 0) {
            lines.add(totals.foreign() + " arrival(s) were not this run's sender's (a tag that does not verify "
                + "under the run's key, or another source address): counted as foreign, never as received; someone "
                + "else is sending to these ports");
        }
        long unrecorded = 0;
        for (FailedRanges f : failures) {
            unrecorded += f.unrecorded();
        }
        if (unrecorded > 0) {
            lines.add(unrecorded + " message(s) reported as failed after being sent could not be recorded (out "
                + "of order, or past " + FailedRanges.MAX_RANGES + " ranges a flow): they count as sent and lost");
        }
        if (failedAfterClose > 0) {
            lines.add(failedAfterClose + " message(s) of an earlier step failed to send after that "
                + "step closed; they were counted there as sent and lost");
        }
        if (window.skewMatters()) {
            String moved = window.movedAcross() == null ? ""
                : ", and " + String.join(", ", window.movedAcross()) + " moved since the step's first message";
            lines.add(String.format(Locale.ROOT, "counters were sampled %.1f ms after the window began%s: their "
                + "deltas may miss the window's first moments", window.skewNs() / 1e6, moved));
        }
    }

    void addAll(List<String> more) {
        lines.addAll(more);
    }

    /** One warning, when there is one ({@code null} is none). */
    void add(String line) {
        if (line != null) {
            lines.add(line);
        }
    }

    /** A transport that promises delivery yet lost, duplicated or reordered: a defect somewhere. */
    void reliability(Transport transport, Map<String, String> options, Counts totals) {
        if (transport.reliable(options) && (totals.lost() > 0 || totals.duplicates() > 0 || totals.reordered() > 0)) {
            lines.add(transport.name() + " promises delivery, yet lost=" + totals.lost() + " duplicates="
                + totals.duplicates() + " reordered=" + totals.reordered()
                + ": a defect of the path or of lossprobe");
        }
    }

    List<String> list() {
        return lines;
    }
}

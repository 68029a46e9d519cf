package io.lossprobe.core.search;

import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.SearchTrial;
import io.lossprobe.core.search.CriterionBounds.Verdict;
import io.lossprobe.core.search.RateSearch.Measured;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The search's trial bookkeeping: every trial in the order it was measured (numbered from 1, with its phase), the
 * criteria for which a repeat set it aside as an outlier, and the trials as one criterion judged them.
 */
final class TrialLog {
    private final List<Trial> trials = new ArrayList<>();

    int size() {
        return trials.size();
    }

    void add(Measured m, String phase) {
        trials.add(new Trial(trials.size() + 1, m, phase));
    }

    /** The trial before the latest: the one the latest repeated. */
    Trial repeated() {
        return trials.get(trials.size() - 2);
    }

    /** The trials so far, as {@code b} (the bounds of {@code criterion}) judged them. */
    List<SearchTrial> judged(CriterionBounds b, String criterion) {
        List<SearchTrial> out = new ArrayList<>();
        for (Trial t : trials) {
            Measured m = t.measured;
            Verdict v = b.verdict(m);
            Latency d = m.delay();
            boolean hasDelay = d != null && d.count() > 0;
            out.add(new SearchTrial(t.number, m.rate(), m.windowNs(), t.phase, m.sent(), m.lost(), m.sendFailed(),
                m.behind(), m.lossRatio(), m.achievedSendRate(), m.achievedReceiveRate(), m.senderLimited(),
                v == Verdict.PASS ? SearchTrial.PASS : v == Verdict.FAIL ? SearchTrial.FAIL
                    : SearchTrial.SENDER_LIMITED,
                t.outliers.containsKey(criterion) ? Boolean.TRUE : null, hasDelay ? d.p50Ns() : null,
                hasDelay ? d.p99Ns() : null, m.senderLimit()));
        }
        return out;
    }

    static final class Trial {
        final int number;
        final Measured measured;
        final String phase;
        final Map<String, Boolean> outliers = new HashMap<>();

        Trial(int number, Measured measured, String phase) {
            this.number = number;
            this.measured = measured;
            this.phase = phase;
        }

        /** A trial its repeat contradicted: kept in the record, judged by the repeat. */
        void setAside(Iterable<String> criteria) {
            for (String c : criteria) {
                outliers.put(c, true);
            }
        }
    }
}

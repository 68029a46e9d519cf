package io.lossprobe.core.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.IntervalResult;
import io.lossprobe.core.result.StepResult;
import java.util.List;

/** What every step cut into intervals must satisfy, on every transport. */
public final class IntervalAssertions {
    private IntervalAssertions() {
    }

    /**
     * Every count of the intervals adds up to the step's, exactly; each interval obeys the step's identities; no
     * interval check warned.
     */
    public static void assertIntervalsAddUp(StepResult step) {
        List<IntervalResult> iv = step.intervals();
        assertThat(iv).as("step %d has intervals", step.step()).isNotEmpty();
        Counts c = step.counts();
        String where = step.transport() + " step " + step.step();
        assertThat(iv.stream().mapToLong(IntervalResult::scheduled).sum()).as(where).isEqualTo(c.scheduled());
        assertThat(iv.stream().mapToLong(IntervalResult::sent).sum()).as(where).isEqualTo(c.sent());
        assertThat(iv.stream().mapToLong(IntervalResult::sendFailed).sum()).as(where).isEqualTo(c.sendFailed());
        assertThat(iv.stream().mapToLong(IntervalResult::behind).sum()).as(where).isEqualTo(c.behind());
        assertThat(iv.stream().mapToLong(IntervalResult::received).sum()).as(where).isEqualTo(c.received());
        assertThat(iv.stream().mapToLong(IntervalResult::lost).sum()).as(where).isEqualTo(c.lost());
        assertThat(iv.stream().mapToLong(IntervalResult::duplicates).sum()).as(where).isEqualTo(c.duplicates());
        assertThat(iv.stream().mapToLong(IntervalResult::reordered).sum()).as(where).isEqualTo(c.reordered());
        assertThat(iv.stream().mapToLong(i -> i.delay().count()).sum()).as(where).isEqualTo(step.delay().count());
        for (IntervalResult i : iv) {
            assertThat(i.lost()).as(where).isNotNegative();
            assertThat(i.received() + i.lost()).as(where).isEqualTo(i.sent());
            assertThat(i.sent() + i.sendFailed() + i.behind()).as(where).isEqualTo(i.scheduled());
        }
        assertThat(step.warnings()).noneMatch(w -> w.startsWith("interval check failed"));
    }
}

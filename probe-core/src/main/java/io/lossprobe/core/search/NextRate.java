package io.lossprobe.core.search;

import io.lossprobe.core.plan.SearchPlan;
import io.lossprobe.core.result.SearchBound;

/**
 * Where a criterion's next trial goes ({@link RateSearch}'s stepping rules, docs/search.md): between its two bounds,
 * out from one, or where a phase starts; never above the sender's ceiling. Null when the criterion is done in this
 * phase, with why noted in its bounds.
 */
final class NextRate {
    private final SearchPlan plan;
    private final SenderCeiling ceiling;

    NextRate(SearchPlan plan, SenderCeiling ceiling) {
        this.plan = plan;
        this.ceiling = ceiling;
    }

    /** The next rate to try for {@code b}, or null when it is done in this phase (and why is noted). */
    Long next(CriterionBounds b, long maxCap) {
        long cap = Math.min(maxCap, ceiling.rate());
        SearchBound capKind = ceiling.rate() != Long.MAX_VALUE && ceiling.rate() <= maxCap ? SearchBound.SENDER
            : SearchBound.MAX;
        Long lower = b.lower;
        Long upper = b.upper;
        if (upper != null && upper <= plan.minRate()) {
            return b.finish(true, SearchBound.MIN);
        }
        if (lower != null && upper != null) {
            if ((double) upper / lower - 1 <= plan.precision()) {
                return b.finish(true, SearchBound.PATH);
            }
            if (upper > cap && (double) cap / lower - 1 <= plan.precision()) {
                return b.finish(true, capKind);
            }
            return RateSteps.inside(lower, Math.min(upper, cap));
        }
        if (lower != null) {
            return above(b, lower, cap, capKind);
        }
        if (upper != null) {
            return below(b, upper, cap);
        }
        return first(b, cap);
    }

    /** Only a lower bound: step up from it (towards the cap). */
    private Long above(CriterionBounds b, long lower, long cap, SearchBound capKind) {
        if ((double) cap / lower - 1 <= plan.precision() || lower >= cap) {
            return b.finish(true, capKind);
        }
        long r;
        if (b.hintUpper != null && b.hintUpper > lower && b.hintUpper < cap && !b.triedHintUpper) {
            b.triedHintUpper = true;
            r = b.hintUpper;
        } else if (capKind == SearchBound.SENDER) {
            // Towards a rate the sender could not carry, halve the gap: that trial may have been a cold start
            // (a sender short far below its speed), so it is a bound to approach, not a hint to jump under.
            return RateSteps.inside(lower, cap);
        } else {
            b.upWidth = b.upWidth == 0 ? 2 * plan.precision() : 2 * b.upWidth;
            r = (long) Math.min(Long.MAX_VALUE / 2, Math.ceil(lower * (1 + b.upWidth)));
        }
        if (r >= cap) {
            // The cap itself when it is the search's maximum (never tried), else just under the sender's limit
            // (or, when the sender managed far less there, just under what it managed).
            r = capKind == SearchBound.SENDER ? Math.max(underSpeed(lower),
                (long) Math.floor(cap / (1 + plan.precision() / 2))) : cap;
            if (capKind == SearchBound.SENDER && underSpeed(lower) > lower) {
                r = underSpeed(lower);
            }
        }
        return r > lower ? RateSteps.round(r, lower, RateSteps.plusOne(cap)) : b.finish(true, capKind);
    }

    /** Only an upper bound: step down from it. */
    private Long below(CriterionBounds b, long upper, long cap) {
        long r;
        if (b.hintLower != null && b.hintLower < upper && !b.triedHintLower) {
            b.triedHintLower = true;
            r = b.hintLower;
        } else {
            // Just under what the path forwarded at the lowest failing rate, when it lost enough for that to
            // tell where its capacity is; else (a little loss at any rate) twice as far as the last step.
            double shortfall = b.atUpper == null ? 1 : 1 - b.atUpper.achievedReceiveRate() / upper;
            b.downWidth = Math.min(0.5, shortfall >= plan.precision() ? shortfall + plan.precision()
                : b.downWidth == 0 ? 2 * plan.precision() : 2 * b.downWidth);
            r = (long) Math.floor(upper * (1 - b.downWidth));
        }
        r = Math.max(plan.minRate(), Math.min(r, cap));
        return r < upper ? RateSteps.round(r, plan.minRate() - 1, upper) : b.finish(true, SearchBound.MIN);
    }

    /** Neither bound yet in this phase: start at the previous phase's lower bound, or the hint, or the cap. */
    private Long first(CriterionBounds b, long cap) {
        long r = b.hintLower != null ? b.hintLower : b.hint != null ? b.hint : cap;
        if (b.hintLower != null) {
            b.triedHintLower = true;
        }
        if (r >= ceiling.rate()) {
            r = underSpeed(plan.minRate() - 1);
        }
        r = Math.max(plan.minRate(), Math.min(r, cap));
        // Rounded up to the search's maximum at most, never up to a rate the sender could not carry.
        return RateSteps.round(r, plan.minRate() - 1,
            ceiling.rate() != Long.MAX_VALUE ? ceiling.rate() : RateSteps.plusOne(cap));
    }

    private long underSpeed(long lower) {
        return ceiling.underSpeed(lower, plan.precision());
    }
}

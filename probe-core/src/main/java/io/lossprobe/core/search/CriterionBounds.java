package io.lossprobe.core.search;

import io.lossprobe.core.result.SearchBound;

/** One criterion's state: this phase's bounds, the previous phase's as hints, and whether it is done. */
final class CriterionBounds {
    final String criterion;
    final double allowed;
    Long lower;
    Long upper;
    RateSearch.Measured atLower;
    RateSearch.Measured atUpper;
    /** A rate to start at (from the probe at full tilt). */
    Long hint;
    Long hintLower;
    Long hintUpper;
    boolean triedHintLower;
    boolean triedHintUpper;
    /** The last relative step taken up from the lower bound (0: none yet in this phase), and down. */
    double upWidth;
    double downWidth;
    boolean done;
    SearchBound boundedBy;

    CriterionBounds(String criterion, double allowed) {
        this.criterion = criterion;
        this.allowed = allowed;
    }

    /** How a trial fares against one criterion. */
    enum Verdict { PASS, FAIL, SENDER_LIMITED }

    Verdict verdict(RateSearch.Measured m) {
        if (m.lossRatio() > allowed) {
            return Verdict.FAIL; // the path lost too much at a rate no higher than the one asked for
        }
        return m.senderLimited() ? Verdict.SENDER_LIMITED : Verdict.PASS;
    }

    Long finish(boolean converged, SearchBound by) {
        done = converged;
        boundedBy = by;
        return null;
    }

    void carryOver() {
        hintLower = lower;
        hintUpper = upper;
        if (lower == null && upper != null) {
            hint = upper;
        }
    }

    void reset() {
        lower = null;
        upper = null;
        atLower = null;
        atUpper = null;
        triedHintLower = false;
        triedHintUpper = false;
        upWidth = 0;
        downWidth = 0;
        done = false;
        boundedBy = null;
    }
}

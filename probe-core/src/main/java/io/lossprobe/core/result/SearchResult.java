package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * What a rate search found for one criterion, transport and message size ({@code run --search}); the method is in
 * docs/search.md.
 *
 * @param criterion     {@code ndr} (no loss) or {@code pdr} (loss ratio at most {@code maxLossRatio})
 * @param maxLossRatio  the loss ratio the criterion allows (0 for NDR)
 * @param rate          the answer: the highest rate measured full-length within the criterion (its lower bound);
 *                      null when even the lowest rate tried failed
 * @param lowerBound    the highest rate a full-length trial passed at (null: none did)
 * @param upperBound    the lowest rate above it that failed full-length, or where the sender fell short (see
 *                      {@code boundedBy}); null when nothing above the answer was out of reach
 * @param lossRatio     the loss ratio measured at {@code rate}
 * @param precision     the relative width the search stops at: upper / lower - 1
 * @param width         the width reached (null without both bounds)
 * @param converged     whether it reached {@code precision} (or a limit that ends the search: see boundedBy)
 * @param boundedBy     what the upper end is: {@code path} (loss above the criterion), {@code sender} (the sender
 *                      could not carry more, so the path was never tested beyond), {@code max} (passed at the
 *                      search's highest rate), {@code min} (failed at its lowest), {@code trials} (the trial
 *                      budget ran out first), {@code stopped} (interrupted first): {@link SearchBound}
 * @param searchNs      wall time the search took, trials and their warm-ups and drains included
 * @param trials        every trial of the search, judged by this criterion
 * @param latencySteps  the steps measured afterwards at fractions of the PDR (only on the PDR's entry, or the
 *                      NDR's when PDR was not searched), else null
 * @param senderLimit   with {@code boundedBy: sender}: why the sender fell short at the rate it could not carry
 *                      ({@code upperBound}), as that trial's {@code senderLimit}; else null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SearchResult(String transport, int messageSize, String criterion, double maxLossRatio, Long rate,
                           Long lowerBound, Long upperBound, Double lossRatio, double precision, Double width,
                           boolean converged, SearchBound boundedBy, long searchNs, List<SearchTrial> trials,
                           List<LatencyStep> latencySteps, SenderLimit senderLimit) {
    public SearchResult {
        trials = List.copyOf(trials);
        latencySteps = latencySteps == null ? null : List.copyOf(latencySteps);
    }

    /** The same entry with the steps measured at fractions of its rate. */
    public SearchResult withLatencySteps(List<LatencyStep> steps) {
        return new SearchResult(transport, messageSize, criterion, maxLossRatio, rate, lowerBound, upperBound,
            lossRatio, precision, width, converged, boundedBy, searchNs, trials, steps, senderLimit);
    }

    /** A step measured at {@code fraction} of the search's rate: its index among the transport's steps. */
    public record LatencyStep(double fraction, long rate, int step) {
    }
}

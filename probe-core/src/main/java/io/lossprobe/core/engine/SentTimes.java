package io.lossprobe.core.engine;

/** One flow's intended and actual send times of a step's recorded messages, by slot ({@code --packets}). */
public record SentTimes(long[] intendedNs, long[] actualNs) {
}

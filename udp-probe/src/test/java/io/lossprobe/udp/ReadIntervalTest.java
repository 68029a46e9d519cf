package io.lossprobe.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The receiving threads' read interval in the default mode ({@link StampedReader#nextSleepNs}). */
class ReadIntervalTest {
    private static final long MS = 1_000_000;

    @Test
    void aTrickleIsReadEveryInterval() {
        assertEquals(MS, StampedReader.nextSleepNs(MS, 8_000, 0, 0, false));
        assertEquals(MS, StampedReader.nextSleepNs(MS, 8_000, 1_000, MS, false)); // an eighth of a buffer: still
    }

    @Test
    void aPassThatFilledMoreThanAnEighthSleepsLessInProportion() {
        // 2,000 read after 1 ms where 1,000 is an eighth: half the sleep, so the next pass meets about 1,000
        assertEquals(MS / 2, StampedReader.nextSleepNs(MS, 8_000, 2_000, MS, false));
        // and it never grows past the interval when the rate falls again
        assertEquals(MS, StampedReader.nextSleepNs(MS, 8_000, 10, MS / 2, false));
    }

    @Test
    void aSmallBufferOrAFloodIsReadAsItComes() {
        // a buffer of 100 datagrams (an eighth: 12) met 1,200 in one pass: read as they come
        assertEquals(0, StampedReader.nextSleepNs(MS, 100, 1_200, 50_000, false));
    }

    @Test
    void anUnstampedDatagramOrNoIntervalMeansWaitingForEachDatagram() {
        assertEquals(0, StampedReader.nextSleepNs(MS, 8_000, 1, MS, true));
        assertEquals(0, StampedReader.nextSleepNs(0, 8_000, 0, 0, false));
    }
}

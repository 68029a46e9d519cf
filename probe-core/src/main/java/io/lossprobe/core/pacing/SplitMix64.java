package io.lossprobe.core.pacing;

/**
 * SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014) used counter-based:
 * draw {@code j} of a key is {@code mix(key + (j + 1) * GAMMA)}, so any draw can be made again by anyone who has the
 * key, in any order.
 */
final class SplitMix64 {
    static final long GAMMA = 0x9E3779B97F4A7C15L;

    private SplitMix64() {
    }

    /** SplitMix64's finaliser: a bijection of 64 bits that mixes every bit into every other. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Draw {@code j} of {@code key}: 64 random bits. */
    static long bits(long key, long j) {
        return mix(key + (j + 1) * GAMMA);
    }

    /** Draw {@code j} of {@code key} as a uniform double in (0, 1]: 53 bits, never 0. */
    static double unit(long key, long j) {
        return ((bits(key, j) >>> 11) + 1) * 0x1.0p-53;
    }
}

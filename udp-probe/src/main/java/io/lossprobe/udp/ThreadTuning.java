package io.lossprobe.udp;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the precision timing mode asks of a measured thread's scheduling, applied by that thread to itself (Linux
 * keeps these settings per thread, and Java has no API for them; the native piece does it):
 *
 * <ul>
 *   <li>timer slack 1 ns: a timed wait that remains (a blocked flow's back-off) ends on time instead of up to
 *       50 us late, Linux's default slack;</li>
 *   <li>with {@code udp.sliceNs}, a scheduler slice that short (Linux 6.12 and later): woken, the thread preempts a
 *       CPU-bound one at once instead of waiting out that thread's slice or the next tick;</li>
 *   <li>with {@code udp.pin=on}, a CPU of its own: the sending thread takes the highest CPU the process may use,
 *       each receiving thread the next lower, so the spinning threads do not migrate (on two cores that leaves
 *       nothing else a core of its own, which is why it is off by default).</li>
 * </ul>
 *
 * Without the native piece neither happens; the results' environment says what took effect
 * ({@code udp.timerSlackNs}, {@code udp.pinnedThreads}, {@code udp.sliceNs}).
 */
final class ThreadTuning {
    /** Timer slack the tuned threads ask for. */
    static final long TIMER_SLACK_NS = 1;

    private final boolean pin;
    private final long sliceNs;
    private final AtomicLong grantedSliceNs = new AtomicLong(-1);
    private final AtomicInteger nextCpuFromTop = new AtomicInteger();
    private final AtomicInteger pinned = new AtomicInteger();
    private final AtomicLong slackNs = new AtomicLong(-1);

    /**
     * @param pin           pin each tuned thread to a CPU of its own
     * @param firstFromTop  the first thread's CPU, counted down from the highest: 0 for the sender, 1 for the
     *                      receivers (the next ones take the CPUs below; a thread left without one is not pinned)
     * @param sliceNs       the scheduler slice to ask for; 0 for the kernel's
     */
    ThreadTuning(boolean pin, int firstFromTop, long sliceNs) {
        this.pin = pin;
        this.sliceNs = sliceNs;
        this.nextCpuFromTop.set(firstFromTop);
    }

    /** What {@code options} ask of the measured threads: pinning and the slice in the precision mode only. */
    static ThreadTuning of(java.util.Map<String, String> options, boolean precision, int firstFromTop) {
        return new ThreadTuning(precision && UdpOptions.PIN.read(options).equals("on"), firstFromTop,
            precision ? UdpOptions.SLICE_NS.read(options) : 0);
    }

    /** Tunes the calling thread (call it from the thread itself, before it measures anything). */
    void applyToCurrentThread() {
        if (NativeUdp.setTimerSlack(TIMER_SLACK_NS)) {
            slackNs.set(NativeUdp.timerSlack());
        }
        if (sliceNs > 0 && NativeUdp.setSlice(sliceNs) == 0) {
            grantedSliceNs.set(NativeUdp.slice());
        }
        if (pin) {
            int cpus = Runtime.getRuntime().availableProcessors();
            int cpu = cpus - 1 - nextCpuFromTop.getAndIncrement();
            if (cpu >= 0 && NativeUdp.pinToCpu(cpu) == 0) {
                pinned.incrementAndGet();
            }
        }
    }

    /** The timer slack a tuned thread read back, or -1 when none was set. */
    long timerSlackNs() {
        return slackNs.get();
    }

    /** The slice a tuned thread read back (0: the kernel keeps no custom slices), or -1 when none was asked. */
    long sliceNs() {
        return grantedSliceNs.get();
    }

    /** Threads pinned so far. */
    int pinnedThreads() {
        return pinned.get();
    }
}

package io.lossprobe.core.transport;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * How late this host's timers wake a sleeping thread, and what each wake-up costs that thread: the floor under any
 * delay a sender that sleeps between its messages can show. Measured once on the sending thread as it opens
 * (before any step: the measured loop itself never runs this), by sleeping {@link #WAKES} times for
 * {@link #SLEEP_NS} each.
 *
 * <p>On the 2-CPU VM lossprobe is developed on, a timer wake-up came 45-55 us late and cost the woken thread
 * 45-65 us of CPU (a C loop of 10 us {@code clock_nanosleep} calls with 1 ns of timer slack used 98% of a core):
 * there a sleeping sender's delay cannot go below about 50 us, whatever the path; on bare metal the figure is a few
 * microseconds.
 */
public final class WakeProbe {
    /** Sender environment keys the result carries (the run's {@code environment}). */
    public static final String LATE_P50_NS = "sendWakeLateNs";
    public static final String LATE_P99_NS = "sendWakeLateP99Ns";
    public static final String CPU_NS = "sendWakeCpuNs";
    static final int WAKES = 200;
    static final long SLEEP_NS = 50_000;
    /** A step's delay p50 within this multiple of the floor is mostly the host's. */
    static final int NEAR_FLOOR = 2;

    private WakeProbe() {
    }

    /** Sleeps {@code wakes} times for {@code sleepNs} on this thread; puts the figures into {@code env}. */
    public static void measure(int wakes, long sleepNs, Map<String, Long> env) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        boolean cpu = threads.isCurrentThreadCpuTimeSupported();
        long[] late = new long[wakes];
        long cpuBefore = cpu ? threads.getCurrentThreadCpuTime() : 0;
        for (int i = 0; i < wakes; i++) {
            long start = System.nanoTime();
            LockSupport.parkNanos(sleepNs);
            late[i] = Math.max(0, System.nanoTime() - start - sleepNs);
        }
        long cpuAfter = cpu ? threads.getCurrentThreadCpuTime() : 0;
        Arrays.sort(late);
        env.put(LATE_P50_NS, late[wakes / 2]);
        env.put(LATE_P99_NS, late[Math.min(wakes - 1, (int) (wakes * 0.99))]);
        if (cpu) {
            env.put(CPU_NS, (cpuAfter - cpuBefore) / wakes);
        }
    }

    /** {@link #measure} with the defaults (about 20 ms on a host whose timers are 50 us late). */
    public static void measure(Map<String, Long> env) {
        measure(WAKES, SLEEP_NS, env);
    }

    /**
     * The step's note when its one-way delay p50 is within {@link #NEAR_FLOOR}x of the floor in {@code env} (a
     * sender's environment), in the default timing; null otherwise, or when the sender measured no floor.
     */
    public static String nearFloor(Map<String, Long> env, long delayP50Ns, String timing) {
        Long late = env == null ? null : env.get(LATE_P50_NS);
        if (late == null || late <= 0 || delayP50Ns <= 0 || !"default".equals(timing)
            || delayP50Ns > NEAR_FLOOR * late) {
            return null;
        }
        Long cpu = env.get(CPU_NS);
        return String.format(Locale.ROOT, "delay p50 %s is within %dx of how late this host's timers wake a "
                + "sleeping thread (%s at the median, measured as the sender opened%s): that much of it is the host's, "
                + "not the path's; --timing precision spins instead of sleeping", us(delayP50Ns), NEAR_FLOOR, us(late),
            cpu == null ? "" : ", each wake-up costing it " + us(cpu) + " of CPU");
    }

    private static String us(long ns) {
        return String.format(Locale.ROOT, "%.0f us", ns / 1e3);
    }
}

package io.lossprobe.core.result;

/**
 * CPU use during a step's measured window and drain.
 *
 * @param processPercent this process's CPU time over wall time, in percent of one core (200 = two cores busy)
 * @param hostPercent    the whole host's busy time, in percent of all cores (100 = every core busy)
 */
public record Cpu(double processPercent, double hostPercent) {
}

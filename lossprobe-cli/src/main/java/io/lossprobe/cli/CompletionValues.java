package io.lossprobe.cli;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.SearchPlan;
import io.lossprobe.core.transport.Timing;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportOption;
import io.lossprobe.core.transport.Transports;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;

/**
 * The values of the options that take one of a few words, for picocli's completion script (an option's
 * {@code completionCandidates}): taken from where the words are defined (the transports on the class path and
 * their options, the plan's and the search's constants, the commands' format lists), so completion offers what the
 * command accepts.
 */
final class CompletionValues {
    private CompletionValues() {
    }

    /** The words of one option, looked up when the completion script is written. */
    private abstract static class Words implements Iterable<String> {
        private final Supplier<List<String>> words;

        Words(Supplier<List<String>> words) {
            this.words = words;
        }

        @Override
        public Iterator<String> iterator() {
            return words.get().iterator();
        }
    }

    /** {@code --transport}: the transports on the class path. */
    static final class TransportNames extends Words {
        TransportNames() {
            super(() -> List.copyOf(Transports.available().keySet()));
        }
    }

    /** {@code --mode}. */
    static final class Modes extends Words {
        Modes() {
            super(() -> List.of(Plan.STREAM, Plan.ECHO));
        }
    }

    /** {@code --timing}. */
    static final class Timings extends Words {
        Timings() {
            super(() -> List.of(Timing.DEFAULT, Timing.PRECISION));
        }
    }

    /** {@code --pattern}: the kinds (burst: and onoff: take their figures after the colon). */
    static final class Patterns extends Words {
        Patterns() {
            super(() -> List.of("constant", "burst:", "poisson", "onoff:"));
        }
    }

    /** {@code --probe}: echo, or echo: and a rate. */
    static final class Probes extends Words {
        Probes() {
            super(() -> List.of(io.lossprobe.core.result.ProbeResult.ECHO, io.lossprobe.core.result.ProbeResult.ECHO
                + ":"));
        }
    }

    /** {@code --search}. */
    static final class SearchCriteria extends Words {
        SearchCriteria() {
            super(() -> List.of(SearchPlan.NDR, SearchPlan.PDR));
        }
    }

    /** {@code --udp-io}: the values of the UDP transport's {@code udp.io} option. */
    static final class UdpIo extends Words {
        UdpIo() {
            super(() -> {
                Transport udp = Transports.available().get("udp");
                for (TransportOption<?> o : udp == null ? List.<TransportOption<?>>of() : udp.options()) {
                    if (o.key().equals("udp.io")) {
                        return Arrays.asList(o.values().split(",\\s*"));
                    }
                }
                return List.of();
            });
        }
    }

    /** {@code -X}: every transport option's key, as {@code KEY=}, but those only a flag sets (-X refuses them). */
    static final class TransportOptionKeys extends Words {
        TransportOptionKeys() {
            super(() -> {
                List<String> keys = new ArrayList<>();
                for (Transport t : Transports.available().values()) {
                    for (TransportOption<?> o : t.options()) {
                        if (!keys.contains(o.key() + "=") && !MulticastOptions.SET_BY.containsKey(o.key())) {
                            keys.add(o.key() + "=");
                        }
                    }
                }
                return keys;
            });
        }
    }

    /** {@code mesh --pairs}: the words {@link MeshPairs} reads ({@code sample:K} takes a number after the colon). */
    static final class Pairs extends Words {
        Pairs() {
            super(() -> List.of("full", "ring", "targets", "sample:"));
        }
    }

    /** {@code compare --format}. */
    static final class CompareFormats extends Words {
        CompareFormats() {
            super(() -> CompareCommand.FORMATS);
        }
    }

    /** {@code report --format}. */
    static final class ReportFormats extends Words {
        ReportFormats() {
            super(() -> ReportCommand.FORMATS);
        }
    }
}

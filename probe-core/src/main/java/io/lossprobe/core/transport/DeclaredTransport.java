package io.lossprobe.core.transport;

import java.util.List;

/**
 * A {@link Transport} whose name, delivery promise, options and counters are declared once, at construction; a
 * transport module then writes only what differs: how it opens its receivers and senders.
 */
public abstract class DeclaredTransport implements Transport {
    private final String name;
    private final boolean reliable;
    private final List<TransportOption<?>> options;
    private final List<CounterDescriptor> counters;

    /**
     * @param name     as typed after {@code --transport}
     * @param reliable whether it promises delivery ({@link Transport#reliable()})
     * @param options  every option it reads from the run's options
     * @param counters every counter it reports
     */
    protected DeclaredTransport(String name, boolean reliable, List<TransportOption<?>> options,
                                List<CounterDescriptor> counters) {
        this.name = name;
        this.reliable = reliable;
        this.options = List.copyOf(options);
        this.counters = List.copyOf(counters);
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public boolean reliable() {
        return reliable;
    }

    @Override
    public final List<TransportOption<?>> options() {
        return options;
    }

    @Override
    public final List<CounterDescriptor> counters() {
        return counters;
    }
}

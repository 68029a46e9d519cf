package io.lossprobe.cli;

import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportOption;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code lossprobe options}: every transport option, as the transports declare it. */
@Command(name = "options",
    description = {"Lists the transport options 'run -X KEY=VALUE' takes, per transport: the values, the default, "
        + "and whether a --target run also applies it on the server ('server') or only on this host ('local')."},
    footer = {"", "Exit codes: 0 listed, 2 bad usage.", "", "Example: lossprobe options"})
public final class OptionsCommand extends Subcommand {
    @Override
    int run(CommandLine cl) {
        PrintWriter out = cl.getOut();
        for (Transport t : Transports.available().values()) {
            out.println(t.name() + ":");
            for (TransportOption<?> o : t.options()) {
                out.printf("  %-30s %-6s default %s; %s%n", o.key(), o.appliesOnServer() ? "server" : "local",
                    o.defaultText(), o.values());
                out.printf("  %-30s        %s%s%n", "", o.description(),
                    o.systemProperty() == null ? "" : " (default also from -D" + o.systemProperty() + ")");
            }
        }
        out.flush();
        return 0;
    }
}

package io.lossprobe.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * A man page (roff, man(7) macros) for one command, written from the picocli model: the same names, synopsis,
 * descriptions and defaults as {@code --help}, so the two never disagree. One page per command:
 * {@code lossprobe(1)}, {@code lossprobe-run(1)}, {@code lossprobe-mesh-merge(1)}, ...
 */
final class ManPage {
    private ManPage() {
    }

    /** The page's file name, e.g. {@code lossprobe-mesh-merge.1}. */
    static String fileName(CommandLine cl) {
        return pageName(cl.getCommandSpec()) + ".1";
    }

    private static String pageName(CommandSpec spec) {
        return spec.qualifiedName("-");
    }

    static String render(CommandLine cl, String version) {
        CommandSpec spec = cl.getCommandSpec();
        String name = pageName(spec);
        StringBuilder sb = new StringBuilder();
        sb.append(".\\\" Generated from the picocli model of lossprobe ").append(version).append("; do not edit.\n");
        sb.append(".TH \"").append(name.toUpperCase(Locale.ROOT)).append("\" \"1\" \"\" \"lossprobe ")
            .append(escape(version)).append("\" \"lossprobe manual\"\n");
        sb.append(".SH NAME\n").append(escape(name)).append(" \\- ").append(escape(firstSentence(spec)))
            .append('\n');
        sb.append(".SH SYNOPSIS\n.nf\n");
        String synopsis = cl.getHelp().synopsis(0).stripTrailing();
        for (String line : synopsis.split("\n")) {
            sb.append(escapeLine(line.replaceFirst("^Usage: ", ""))).append('\n');
        }
        sb.append(".fi\n");
        sb.append(".SH DESCRIPTION\n");
        for (String paragraph : paragraphs(spec.usageMessage().description())) {
            sb.append(".PP\n").append(escapeLine(paragraph)).append('\n');
        }
        options(sb, spec);
        List<CommandLine> subs = cl.getSubcommands().values().stream()
            .filter(s -> !s.getCommandSpec().usageMessage().hidden() && !s.getCommandName().equals("help"))
            .toList();
        if (!subs.isEmpty()) {
            sb.append(".SH COMMANDS\n");
            for (CommandLine sub : subs) {
                sb.append(".TP\n\\fB").append(escape(sub.getCommandName())).append("\\fR\n")
                    .append(escapeLine(firstSentence(sub.getCommandSpec()))).append(" See \\fB")
                    .append(escape(pageName(sub.getCommandSpec()))).append("\\fR(1).\n");
            }
        }
        List<String> footer = paragraphs(spec.usageMessage().footer());
        if (!footer.isEmpty()) {
            sb.append(".SH NOTES\n");
            for (String paragraph : footer) {
                sb.append(".PP\n").append(escapeLine(paragraph)).append('\n');
            }
        }
        seeAlso(sb, spec, subs);
        return sb.toString();
    }

    /** OPTIONS and ARGUMENTS: every option and positional parameter that is not hidden. */
    private static void options(StringBuilder sb, CommandSpec spec) {
        List<OptionSpec> options = spec.options();
        if (!options.isEmpty()) {
            sb.append(".SH OPTIONS\n");
            for (OptionSpec o : options) {
                if (o.hidden()) {
                    continue;
                }
                sb.append(".TP\n");
                List<String> names = new ArrayList<>();
                for (String n : o.names()) {
                    names.add("\\fB" + escape(n) + "\\fR");
                }
                sb.append(String.join(", ", names));
                if (o.arity().max() > 0) {
                    sb.append("=\\fI").append(escape(o.paramLabel())).append("\\fR");
                }
                sb.append('\n').append(escapeLine(String.join(" ", text(o.description())))).append('\n');
            }
        }
        List<PositionalParamSpec> positionals = spec.positionalParameters();
        if (!positionals.isEmpty()) {
            sb.append(".SH ARGUMENTS\n");
            for (PositionalParamSpec p : positionals) {
                if (p.hidden()) {
                    continue;
                }
                sb.append(".TP\n\\fI").append(escape(p.paramLabel())).append("\\fR\n")
                    .append(escapeLine(String.join(" ", text(p.description())))).append('\n');
            }
        }
    }

    /** SEE ALSO: the root command's page, the subcommands' pages and the documentation. */
    private static void seeAlso(StringBuilder sb, CommandSpec spec, List<CommandLine> subs) {
        sb.append(".SH SEE ALSO\n");
        List<String> see = new ArrayList<>();
        CommandSpec root = spec;
        while (root.parent() != null) {
            root = root.parent();
        }
        if (root != spec) {
            see.add("\\fB" + escape(pageName(root)) + "\\fR(1)");
        }
        for (CommandLine sub : subs) {
            see.add("\\fB" + escape(pageName(sub.getCommandSpec())) + "\\fR(1)");
        }
        see.add("the documentation in docs/ of the lossprobe distribution");
        sb.append(String.join(", ", see)).append('\n');
    }

    /** Description lines as picocli prints them ({@code %%} is a percent sign, {@code %n} a line break). */
    private static List<String> text(String[] lines) {
        List<String> out = new ArrayList<>();
        for (String line : lines) {
            out.add(line.replace("%n", "\n").replace("%%", "%"));
        }
        return out;
    }

    /** Blank lines separate paragraphs; other lines of one paragraph are joined. */
    private static List<String> paragraphs(String[] lines) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : text(lines)) {
            if (line.isBlank()) {
                if (current.length() > 0) {
                    out.add(current.toString());
                    current.setLength(0);
                }
                continue;
            }
            current.append(current.length() == 0 ? "" : " ").append(line.strip());
        }
        if (current.length() > 0) {
            out.add(current.toString());
        }
        return out;
    }

    private static String firstSentence(CommandSpec spec) {
        String[] d = spec.usageMessage().description();
        String first = d.length == 0 ? spec.name() : text(d).get(0);
        int stop = first.indexOf(". ");
        return stop < 0 ? first.replaceAll("\\.$", "") : first.substring(0, stop);
    }

    /** Escapes roff in running text: backslashes, and hyphens as the minus sign options need. */
    static String escape(String text) {
        return text.replace("\\", "\\e").replace("-", "\\-");
    }

    /** {@link #escape}, and a line that starts with a control character made literal. */
    private static String escapeLine(String text) {
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String e = escape(line);
            if (e.startsWith(".") || e.startsWith("'")) {
                e = "\\&" + e;
            }
            sb.append(sb.length() == 0 ? "" : "\n.br\n").append(e);
        }
        return sb.toString();
    }
}

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

    /** The page with no date in its title line; {@link #render(CommandLine, String, String)} gives one. */
    static String render(CommandLine cl, String version) {
        return render(cl, version, "");
    }

    /**
     * The page of {@code cl}, dated {@code date} (YYYY-MM-DD, the build's output timestamp). Sections: NAME,
     * SYNOPSIS, DESCRIPTION, OPTIONS, ARGUMENTS, COMMANDS, EXIT STATUS, ENVIRONMENT, FILES, NOTES, EXAMPLES and
     * SEE ALSO. The footer's "Exit codes: ..." paragraph is the EXIT STATUS, its "Example: ..." paragraphs are the
     * EXAMPLES; ENVIRONMENT and FILES follow from the options the command has. No input line is longer than 80
     * bytes, so {@code mandoc -Tlint} has nothing to say.
     */
    static String render(CommandLine cl, String version, String date) {
        CommandSpec spec = cl.getCommandSpec();
        String name = pageName(spec);
        StringBuilder sb = new StringBuilder();
        sb.append(".\\\" Generated from the picocli model of lossprobe ").append(version).append("; do not edit.\n");
        sb.append(".TH \"").append(name.toUpperCase(Locale.ROOT)).append("\" \"1\" \"").append(date)
            .append("\" \"lossprobe ").append(escape(version)).append("\" \"lossprobe manual\"\n");
        sb.append(".SH NAME\n").append(wrap(escape(name) + " \\- " + escape(firstSentence(spec)))).append('\n');
        sb.append(".SH SYNOPSIS\n.nf\n");
        String synopsis = cl.getHelp().synopsis(0).stripTrailing();
        for (String line : synopsis.split("\n")) {
            sb.append(escapeLine(line.replaceFirst("^Usage: ", ""))).append('\n');
        }
        sb.append(".fi\n");
        section(sb, "DESCRIPTION", paragraphs(spec.usageMessage().description()));
        options(sb, spec);
        List<CommandLine> subs = cl.getSubcommands().values().stream()
            .filter(s -> !s.getCommandSpec().usageMessage().hidden() && !s.getCommandName().equals("help"))
            .toList();
        if (!subs.isEmpty()) {
            sb.append(".SH COMMANDS\n");
            for (CommandLine sub : subs) {
                sb.append(".TP\n\\fB").append(escape(sub.getCommandName())).append("\\fR\n")
                    .append(wrap(escape(firstSentence(sub.getCommandSpec())) + " See \\fB"
                        + escape(pageName(sub.getCommandSpec())) + "\\fR(1).")).append('\n');
            }
        }
        List<String> notes = new ArrayList<>();
        List<String> examples = new ArrayList<>();
        String exitCodes = null;
        for (String paragraph : paragraphs(spec.usageMessage().footer())) {
            if (paragraph.startsWith(EXIT_CODES)) {
                exitCodes = paragraph.substring(EXIT_CODES.length()).strip();
            } else if (paragraph.startsWith(EXAMPLE)) {
                examples.add(paragraph.substring(EXAMPLE.length()).strip());
            } else {
                notes.add(paragraph);
            }
        }
        exitStatus(sb, exitCodes);
        ManPageFiles.environment(sb, spec);
        ManPageFiles.files(sb, spec);
        section(sb, "NOTES", notes);
        examples(sb, examples);
        seeAlso(sb, spec, subs);
        return sb.toString();
    }

    private static final String EXIT_CODES = "Exit codes:";
    private static final String EXAMPLE = "Example:";
    /** The longest input line mandoc's lint accepts without a STYLE message. */
    static final int MAX_LINE = 80;

    /** A section of paragraphs: the first right after .SH (a .PP there is one mandoc skips), the others after .PP. */
    static void section(StringBuilder sb, String title, List<String> paragraphs) {
        if (paragraphs.isEmpty()) {
            return;
        }
        sb.append(".SH ").append(title).append('\n');
        for (int i = 0; i < paragraphs.size(); i++) {
            sb.append(i == 0 ? "" : ".PP\n").append(escapeLine(paragraphs.get(i))).append('\n');
        }
    }

    /** EXIT STATUS: "0 ok, 1 runtime failure, 2 bad usage" as a list of codes. */
    private static void exitStatus(StringBuilder sb, String exitCodes) {
        if (exitCodes == null) {
            throw new IllegalStateException("a command without an 'Exit codes:' paragraph in its footer");
        }
        sb.append(".SH EXIT STATUS\n");
        for (String code : exitCodes.replaceFirst("\\.$", "").split(",\\s+(?=\\d+ )")) {
            int space = code.indexOf(' ');
            sb.append(".TP\n\\fB").append(code, 0, space).append("\\fR\n")
                .append(escapeLine(code.substring(space + 1))).append('\n');
        }
    }

    /** EXAMPLES: each command line as typed, broken with a backslash where it would pass 80 columns. */
    private static void examples(StringBuilder sb, List<String> examples) {
        if (examples.isEmpty()) {
            throw new IllegalStateException("a command without an 'Example:' paragraph in its footer");
        }
        sb.append(".SH EXAMPLES\n");
        for (int i = 0; i < examples.size(); i++) {
            sb.append(i == 0 ? "" : ".PP\n").append(".nf\n");
            StringBuilder line = new StringBuilder();
            for (String word : escape(examples.get(i)).split(" ")) {
                if (line.length() > 0 && line.length() + 1 + word.length() + 3 > MAX_LINE) {
                    sb.append(line).append(" \\e\n");
                    line.setLength(0);
                    line.append("    ");
                }
                line.append(line.length() == 0 || line.toString().isBlank() ? "" : " ").append(word);
            }
            sb.append(line).append("\n.fi\n");
        }
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
        see.add("the documentation in docs/ of the lossprobe distribution (/usr/share/doc/lossprobe/docs from the "
            + "Debian package)");
        sb.append(wrap(String.join(", ", see))).append('\n');
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

    /** {@link #escape}, wrapped ({@link #wrap}); a line break in the text is a .br. */
    static String escapeLine(String text) {
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            sb.append(sb.length() == 0 ? "" : "\n.br\n").append(wrap(escape(line)));
        }
        return sb.toString();
    }

    /**
     * Roff text in lines of at most 80 bytes, broken at spaces (roff joins them again); a line that would start
     * with a control character (. or ') is made literal with \\&amp;.
     */
    static String wrap(String roff) {
        StringBuilder out = new StringBuilder();
        StringBuilder line = new StringBuilder();
        for (String word : roff.split(" +")) {
            if (word.isEmpty()) {
                continue;
            }
            if (line.length() > 0 && line.length() + 1 + word.length() > MAX_LINE) {
                out.append(literal(line.toString())).append('\n');
                line.setLength(0);
            }
            line.append(line.length() == 0 ? "" : " ").append(word);
        }
        return out.append(literal(line.toString())).toString();
    }

    private static String literal(String line) {
        return line.startsWith(".") || line.startsWith("'") ? "\\&" + line : line;
    }
}

package io.lossprobe.cli;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * "Did you mean" for a mistyped command or option. Picocli's own suggestions compare letter pairs, which misses
 * the commonest typo, two swapped letters ({@code rnu} for {@code run}); names within a small edit distance
 * (optimal string alignment: insert, delete, substitute, swap neighbours) come first, picocli's after.
 */
final class Suggestions {
    private Suggestions() {
    }

    /** One line for an argument nothing matched, with suggestions when any name is close. */
    static String describe(CommandLine.UnmatchedArgumentException ex) {
        CommandSpec spec = ex.getCommandLine().getCommandSpec();
        List<String> unmatched = ex.getUnmatched();
        if (unmatched.isEmpty()) {
            return ex.getMessage();
        }
        String arg = unmatched.get(0);
        boolean option = arg.startsWith("-");
        String word = option && arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
        List<String> candidates = new ArrayList<>();
        if (option) {
            for (OptionSpec o : spec.options()) {
                if (!o.hidden()) {
                    candidates.addAll(List.of(o.names()));
                }
            }
        } else {
            spec.subcommands().forEach((name, sub) -> {
                if (!sub.getCommandSpec().usageMessage().hidden()) {
                    candidates.add(name);
                }
            });
        }
        List<String> close = closest(word, candidates);
        if (close.isEmpty()) {
            close = ex.getSuggestions();
        }
        String what;
        if (option) {
            what = "unknown option '" + word + "' for '" + spec.qualifiedName() + "'";
        } else if (!spec.subcommands().isEmpty() && spec.parent() == null) {
            what = "unknown command '" + arg + "'";
        } else {
            what = "unexpected argument '" + arg + "' for '" + spec.qualifiedName() + "'";
        }
        if (!close.isEmpty()) {
            return what + "; did you mean " + quoted(close) + "?";
        }
        if (!option && !candidates.isEmpty() && spec.parent() == null) {
            return what + " (commands: " + String.join(", ", candidates) + ")";
        }
        return what + " (see '" + spec.qualifiedName() + " --help')";
    }

    /** Names within edit distance 2 of {@code word} (1 for words of up to 4 letters), nearest first. */
    static List<String> closest(String word, List<String> candidates) {
        String w = word.toLowerCase(Locale.ROOT);
        int letters = w.replaceFirst("^-+", "").length();
        int max = letters <= 4 ? 1 : 2;
        record Scored(String name, int distance) {
        }
        List<Scored> found = new ArrayList<>();
        for (String c : candidates) {
            int d = distance(w, c.toLowerCase(Locale.ROOT));
            if (d <= max) {
                found.add(new Scored(c, d));
            }
        }
        found.sort(Comparator.comparingInt(Scored::distance));
        return found.stream().map(Scored::name).distinct().limit(3).toList();
    }

    /** Optimal string alignment distance (Levenshtein with adjacent transpositions), as for -X keys. */
    static int distance(String a, String b) {
        return io.lossprobe.core.transport.TransportOptions.distance(a, b);
    }

    private static String quoted(List<String> names) {
        List<String> q = names.stream().map(n -> "'" + n + "'").toList();
        return q.size() == 1 ? q.get(0) : String.join(", ", q.subList(0, q.size() - 1)) + " or " + q.get(q.size() - 1);
    }
}

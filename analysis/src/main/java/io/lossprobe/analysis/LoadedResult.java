package io.lossprobe.analysis;

import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A result file as read from disk: where it came from, the run it holds, and what the result records do not carry
 * (per-interval series, rate searches; see {@link RunExtras}).
 */
public record LoadedResult(Path file, RunResult run, RunExtras extras) {

    public LoadedResult(Path file, RunResult run) {
        this(file, run, RunExtras.NONE);
    }

    /**
     * Reads one result file.
     *
     * @throws InputException with one line naming the file, for missing, malformed or too-new files
     */
    public static LoadedResult read(Path file) throws InputException {
        try {
            RunResult run = ResultFiles.read(file);
            return new LoadedResult(file, run, extras(file));
        } catch (java.nio.file.NoSuchFileException | java.io.FileNotFoundException e) {
            throw new InputException("cannot read " + file + ": no such file");
        } catch (IOException e) {
            throw new InputException(oneLine(e.getMessage()));
        }
    }

    /** Reads many files, oldest run first; {@code progress} hears "read i/n" now and then for long lists. */
    public static List<LoadedResult> readAll(List<Path> files, Consumer<String> progress) throws InputException {
        List<LoadedResult> loaded = new ArrayList<>(files.size());
        long lastNs = System.nanoTime();
        for (int i = 0; i < files.size(); i++) {
            loaded.add(read(files.get(i)));
            long now = System.nanoTime();
            if (files.size() > 10 && (now - lastNs > 1_000_000_000L || i + 1 == files.size())) {
                progress.accept("read " + (i + 1) + "/" + files.size() + " result files");
                lastNs = now;
            }
        }
        loaded.sort(Comparator.comparing(LoadedResult::startedAt));
        return loaded;
    }

    /** When the run started; the epoch when the file does not say (so it sorts first). */
    public Instant startedAt() {
        try {
            return run.startedAt() == null ? Instant.EPOCH : Instant.parse(run.startedAt());
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }

    /**
     * The step of this run that corresponds to {@code like} (of another run): same transport, level and, when both
     * record one, message size.
     */
    public Optional<StepResult> stepLike(StepResult like) {
        return run.steps().stream()
            .filter(s -> s.transport().equals(like.transport()) && s.level().equals(like.level())
                && (s.messageSize() == null || like.messageSize() == null
                || s.messageSize().equals(like.messageSize())))
            .findFirst();
    }

    /** Whether the run stepped through more than one message size ({@code --sizes}). */
    public boolean sized() {
        return run.plan() != null && run.plan().sizes().size() > 1;
    }

    /** The step of {@code transport} at {@code level} (as written, e.g. "30k"), if the run has one. */
    public Optional<StepResult> step(String transport, String level) {
        return run.steps().stream()
            .filter(s -> s.transport().equals(transport) && s.level().toString().equals(level))
            .findFirst();
    }

    /** The extras, read only from files that mention them (most do not, and a second parse costs time). */
    private static RunExtras extras(Path file) throws IOException {
        byte[] bytes = java.nio.file.Files.readAllBytes(file);
        String text = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        if (!text.contains("\"intervals\"") && !text.contains("\"search\"")) {
            return RunExtras.NONE;
        }
        return RunExtras.of(ResultFiles.mapper().readTree(bytes));
    }

    /** The per-interval series of {@code step} (one of this run's steps), empty when the file has none. */
    public List<RunExtras.Interval> intervals(StepResult step) {
        for (int i = 0; i < run.steps().size(); i++) {
            if (run.steps().get(i) == step) {
                return extras.intervals().getOrDefault(i, List.of());
            }
        }
        return List.of();
    }

    static String oneLine(String message) {
        if (message == null) {
            return "unreadable input";
        }
        int nl = message.indexOf('\n');
        return (nl < 0 ? message : message.substring(0, nl)).trim();
    }
}

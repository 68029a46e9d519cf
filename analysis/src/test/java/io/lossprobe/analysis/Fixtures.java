package io.lossprobe.analysis;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Result files for tests: a real UDP run on loopback (8 ports, levels 10k and 50k, no loss) as recorded by the
 * engine, edited as JSON to make each kind of trouble.
 */
final class Fixtures {
    private Fixtures() {
    }

    static ObjectNode sample() {
        try (InputStream in = Fixtures.class.getResourceAsStream("/sample-result.json")) {
            return (ObjectNode) ResultFiles.mapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The sample with {@code edit} applied to step {@code index} (0 = udp 10k, 1 = udp 50k). */
    static ObjectNode withStep(int index, Consumer<ObjectNode> edit) {
        ObjectNode root = sample();
        edit.accept((ObjectNode) root.withArray("steps").get(index));
        return root;
    }

    static void lose(ObjectNode step, long lost) {
        ObjectNode counts = (ObjectNode) step.get("counts");
        counts.put("lost", lost);
        counts.put("received", counts.get("sent").asLong() - lost);
    }

    /** A step whose delay histogram recorded nothing (every message lost), as the engine writes it. */
    static void noDelay(ObjectNode step) {
        step.set("delay", ResultFiles.mapper().valueToTree(io.lossprobe.core.result.Latency.EMPTY));
    }

    static Path write(Path dir, String name, ObjectNode root) {
        try {
            Path file = dir.resolve(name);
            Files.write(file, ResultFiles.mapper().writeValueAsBytes(root));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static LoadedResult load(Path dir, String name, ObjectNode root) {
        try {
            return LoadedResult.read(write(dir, name, root));
        } catch (InputException e) {
            throw new IllegalStateException(e);
        }
    }
}

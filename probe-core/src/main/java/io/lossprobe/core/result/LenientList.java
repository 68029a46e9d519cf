package io.lossprobe.core.result;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a list of results added after schema 2 began (a step's intervals, a run's searches) leniently: files written
 * by hand or by other tools in the shapes docs/report.md documents (a search's {@code trials} as a count) keep
 * reading, and an entry that does not fit is left out rather than making the whole file unreadable. What the
 * report draws from these comes from the file itself ({@code RunExtras}), as before they had a type.
 */
abstract class LenientList<T> extends JsonDeserializer<List<T>> {
    private final Class<T> type;

    LenientList(Class<T> type) {
        this.type = type;
    }

    @Override
    public List<T> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonNode node = p.readValueAsTree();
        if (node == null || !node.isArray()) {
            return null;
        }
        List<T> out = new ArrayList<>();
        for (JsonNode n : node) {
            if (!n.isObject()) {
                continue;
            }
            try {
                out.add(ResultFiles.mapper().treeToValue(adapt((ObjectNode) n.deepCopy()), type));
            } catch (IOException | IllegalArgumentException e) {
                // Not in the shape this version writes: left out here, still in the file.
            }
        }
        return out;
    }

    /** Brings an entry in a documented older shape to this one. */
    ObjectNode adapt(ObjectNode entry) {
        return entry;
    }

    /** A run's searches; a {@code trials} count (the report's older shape) becomes no trial list. */
    static final class Searches extends LenientList<SearchResult> {
        Searches() {
            super(SearchResult.class);
        }

        @Override
        ObjectNode adapt(ObjectNode entry) {
            if (!entry.path("trials").isArray()) {
                entry.putArray("trials");
            }
            return entry;
        }
    }

    /** A step's intervals. */
    static final class Intervals extends LenientList<IntervalResult> {
        Intervals() {
            super(IntervalResult.class);
        }
    }
}

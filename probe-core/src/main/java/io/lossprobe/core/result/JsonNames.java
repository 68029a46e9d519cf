package io.lossprobe.core.result;

import java.util.function.Function;

/** Reading an enum written to the results as one of a fixed set of strings. */
final class JsonNames {
    private JsonNames() {
    }

    /**
     * The constant whose string is {@code json}; null for a string no constant has (a value from a newer version):
     * reading it is then no stricter than reading a plain string was.
     */
    static <E extends Enum<E>> E find(E[] constants, String json, Function<E, String> name) {
        for (E e : constants) {
            if (name.apply(e).equals(json)) {
                return e;
            }
        }
        return null;
    }
}

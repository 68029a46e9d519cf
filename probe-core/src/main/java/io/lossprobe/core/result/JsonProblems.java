package io.lossprobe.core.result;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;

/**
 * Jackson's errors in words for people: where in the file ({@code steps[0].level}), what was expected and what was
 * found, never a Java type or Jackson's token names.
 */
public final class JsonProblems {
    private JsonProblems() {
    }

    /** One line, e.g. {@code at steps[0].level: expected a level, found an object}. */
    public static String describe(JsonProcessingException e) {
        if (!(e instanceof JsonMappingException m)) {
            String msg = e.getOriginalMessage() == null ? "malformed" : e.getOriginalMessage().lines().findFirst()
                .orElse("malformed");
            return "not valid JSON: " + msg.replaceAll(" \\(code \\d+\\)", "").replace("`", "")
                + (e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + ")");
        }
        String at = path(m);
        String where = at.isEmpty() ? "" : "at " + at + ": ";
        if (m.getCause() instanceof IllegalArgumentException cause && cause.getMessage() != null) {
            return where + cause.getMessage();
        }
        if (m instanceof InvalidFormatException f) {
            return where + "'" + f.getValue() + "' is not " + kind(f.getTargetType());
        }
        if (m instanceof MismatchedInputException mi && mi.getTargetType() != null) {
            String found = m.getProcessor() instanceof JsonParser p ? found(p.currentToken()) : null;
            return where + "expected " + kind(mi.getTargetType()) + (found == null ? "" : ", found " + found);
        }
        return where + "a value of the wrong kind";
    }

    /** The path Jackson was reading, as {@code steps[0].flows[3].counts}. */
    public static String path(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getFieldName() != null) {
                path.append(path.length() == 0 ? "" : ".").append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                path.append('[').append(r.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static String kind(Class<?> type) {
        if (type.isArray() || Collection.class.isAssignableFrom(type)) {
            return "a list";
        }
        if (Map.class.isAssignableFrom(type)) {
            return "an object";
        }
        if (CharSequence.class.isAssignableFrom(type)) {
            return "a string";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type.isPrimitive() || Number.class.isAssignableFrom(type)) {
            return "a number";
        }
        // A type of ours: its name in words (Level -> "a level", StepResult -> "a step result").
        String words = type.getSimpleName().replaceAll("([a-z])([A-Z])", "$1 $2").toLowerCase(Locale.ROOT);
        return ("aeiou".indexOf(words.charAt(0)) >= 0 ? "an " : "a ") + words;
    }

    private static String found(JsonToken token) {
        if (token == null) {
            return null;
        }
        return switch (token) {
            case START_OBJECT, END_OBJECT, FIELD_NAME -> "an object";
            case START_ARRAY, END_ARRAY -> "a list";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "true or false";
            case VALUE_NULL -> "null";
            default -> null;
        };
    }
}

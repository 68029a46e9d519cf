package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** What bounds a rate search's answer from above ({@link SearchResult#boundedBy}), with the string the file holds. */
public enum SearchBound {
    /** The path lost more than the criterion allows above the answer. */
    PATH("path"),
    /** The sender could not carry more, so the path was never tested beyond. */
    SENDER("sender"),
    /** It passed at the search's highest rate ({@code --search-max}). */
    MAX("max"),
    /** It failed even at the search's lowest rate ({@code --search-min}). */
    MIN("min"),
    /** The trial budget ran out first. */
    TRIALS("trials"),
    /** The run was interrupted first. */
    STOPPED("stopped");

    private final String json;

    SearchBound(String json) {
        this.json = json;
    }

    /** The string the results file holds. */
    @JsonValue
    public String json() {
        return json;
    }

    /** The bound {@code json} names; null for one this version does not know. */
    @JsonCreator
    public static SearchBound of(String json) {
        return JsonNames.find(values(), json, SearchBound::json);
    }

    @Override
    public String toString() {
        return json;
    }
}

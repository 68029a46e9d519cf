package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** A run's {@code status} in its results file: each state declared once, with the string the file holds. */
public enum RunStatus {
    /** Still measuring: the file is rewritten after every step. */
    RUNNING("running"),
    /** Every step measured. */
    COMPLETE("complete"),
    /** Stopped early (Ctrl-C): the steps done so far. */
    INTERRUPTED("interrupted"),
    /** Ended by an error ({@code error} says which), or the file could not be written. */
    FAILED("failed");

    private final String json;

    RunStatus(String json) {
        this.json = json;
    }

    /** The string the results file holds. */
    @JsonValue
    public String json() {
        return json;
    }

    /** The status {@code json} names; null for one this version does not know, as for a file that has none. */
    @JsonCreator
    public static RunStatus of(String json) {
        return JsonNames.find(values(), json, RunStatus::json);
    }

    @Override
    public String toString() {
        return json;
    }
}

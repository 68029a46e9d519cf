package io.lossprobe.core.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Traffic classes ({@code --dscp}): a DSCP is 0 to 63, named EF (46), AF11 to AF43 (RFC 2597: 8 x class + 2 x drop
 * precedence) or CS0 to CS7 (8 x n), or given as the number. On the wire it is the top six bits of the IPv4 TOS byte
 * and of the IPv6 traffic class: {@link #tos} is the byte a socket is set to.
 */
public final class Dscp {
    /** Expedited forwarding (RFC 3246). */
    public static final int EF = 46;
    public static final int MAX = 63;

    private Dscp() {
    }

    /** The TOS / traffic-class byte of {@code dscp} (ECN bits 0). */
    public static int tos(int dscp) {
        return dscp << 2;
    }

    /** The DSCP of a TOS / traffic-class byte. */
    public static int ofTos(int tos) {
        return (tos & 0xff) >> 2;
    }

    /** One class: EF, AF11-AF43, CS0-CS7 (any case) or 0-63; else {@link IllegalArgumentException}, one line. */
    public static int parse(String text) {
        String t = text == null ? "" : text.trim().toUpperCase(Locale.ROOT);
        if (t.isEmpty()) {
            throw new IllegalArgumentException("--dscp has an empty class; give EF, AF11-AF43, CS0-CS7 or 0-63");
        }
        if (t.equals("EF")) {
            return EF;
        }
        if (t.matches("CS[0-7]")) {
            return 8 * (t.charAt(2) - '0');
        }
        if (t.matches("AF[1-4][1-3]")) {
            return 8 * (t.charAt(2) - '0') + 2 * (t.charAt(3) - '0');
        }
        if (t.matches("[0-9]{1,9}")) {
            int v = Integer.parseInt(t);
            if (v <= MAX) {
                return v;
            }
            throw new IllegalArgumentException("--dscp " + text.trim() + " is above 63 (a DSCP is 6 bits)");
        }
        throw new IllegalArgumentException("--dscp: unknown class '" + text.trim()
            + "'; give EF, AF11-AF43, CS0-CS7 or 0-63");
    }

    /** A comma-separated list of classes, in order (a class may repeat). */
    public static List<Integer> parseList(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("--dscp is empty; give EF, AF11-AF43, CS0-CS7 or 0-63, comma-separated");
        }
        List<Integer> out = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            out.add(parse(part));
        }
        return out;
    }

    /** The usual name of {@code dscp}: EF, AFxy, CSn, else the number. */
    public static String name(int dscp) {
        if (dscp == EF) {
            return "EF";
        }
        if (dscp % 8 == 0 && dscp >= 0 && dscp <= MAX) {
            return "CS" + dscp / 8;
        }
        int cls = dscp / 8;
        int drop = (dscp % 8) / 2;
        if (dscp % 2 == 0 && cls >= 1 && cls <= 4 && drop >= 1 && drop <= 3) {
            return "AF" + cls + drop;
        }
        return Integer.toString(dscp);
    }

    /** Names of the classes whose bits are set in {@code mask} (bit d for DSCP d), joined by {@code ", "}. */
    public static String names(long mask) {
        List<String> names = new ArrayList<>();
        for (int d = 0; d <= MAX; d++) {
            if ((mask & (1L << d)) != 0) {
                names.add(name(d));
            }
        }
        return String.join(", ", names);
    }
}

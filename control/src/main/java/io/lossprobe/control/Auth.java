package io.lossprobe.control;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Challenge-response with a shared secret (HMAC-SHA256): each side proves it knows the secret over both sides'
 * fresh nonces, so the secret never crosses the wire and an answer recorded once is useless on a new connection.
 */
public final class Auth {
    /** Where the secret comes from when no file is given. */
    public static final String SECRET_ENV = "LOSSPROBE_SECRET";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] secret;

    private Auth(byte[] secret) {
        if (secret.length < 8) {
            throw new IllegalArgumentException("the shared secret must be at least 8 bytes");
        }
        this.secret = secret.clone();
    }

    public static Auth ofSecret(String secret) {
        return new Auth(secret.strip().getBytes(StandardCharsets.UTF_8));
    }

    /** The secret from {@code file} (trailing whitespace ignored) or, when file is null, from $LOSSPROBE_SECRET. */
    public static Auth load(Path file) {
        if (file != null) {
            try {
                return ofSecret(Files.readString(file));
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("cannot read the secret file " + file + ": " + e.getMessage());
            }
        }
        String env = System.getenv(SECRET_ENV);
        if (env == null || env.isBlank()) {
            throw new IllegalArgumentException("a shared secret is required: --secret-file FILE or $" + SECRET_ENV);
        }
        return ofSecret(env);
    }

    public static String nonce() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getEncoder().encodeToString(b);
    }

    /** The proof a {@code role} ("client" or "server") gives over the two nonces, in that role's order. */
    public String proof(String role, String firstNonce, String secondNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] out = mac.doFinal(("lossprobe-v1|" + role + "|" + firstNonce + "|" + secondNonce)
                .getBytes(StandardCharsets.UTF_8));
            return Base64.getEncoder().encodeToString(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /**
     * The session's key, computed by both sides after the handshake and never sent: HMAC-SHA256 over the label and
     * both nonces, client's first. The run's data key is derived from it ({@link
     * io.lossprobe.core.wire.MessageAuth#derive}).
     */
    public byte[] sessionKey(String clientNonce, String serverNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(("lossprobe-v1|session|" + clientNonce + "|" + serverNonce)
                .getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Constant-time comparison, so the time taken tells an attacker nothing. */
    public boolean verify(String expected, String actual) {
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
            actual.getBytes(StandardCharsets.US_ASCII));
    }
}

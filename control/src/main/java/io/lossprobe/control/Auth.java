package io.lossprobe.control;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Set;
import java.util.function.Consumer;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The shared secret and what is derived from it. The handshake is challenge-response with HMAC-SHA256 over both
 * sides' fresh nonces, the server proving first (so a controller gives nothing away to a host that does not know
 * the secret); the secret never crosses the wire, and an answer recorded once is useless on a new connection. Both
 * sides then derive the session key ({@link #sessionKey}), from which come the keys that authenticate every control
 * frame ({@link #frameKey}) and the run's data key ({@link io.lossprobe.core.wire.MessageAuth#derive}).
 */
public final class Auth {
    /** Where the secret comes from when no file is given. */
    public static final String SECRET_ENV = "LOSSPROBE_SECRET";
    /** Shortest secret accepted, in bytes. */
    public static final int MIN_SECRET_BYTES = 16;
    /** Random bytes {@code lossprobe keygen} writes (256 bits), hex-encoded; shorter secrets get a warning. */
    public static final int KEYGEN_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] secret;

    private Auth(byte[] secret) {
        if (secret.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("the shared secret is " + secret.length + " bytes; at least "
                + MIN_SECRET_BYTES + " are needed: make one with 'lossprobe keygen FILE'");
        }
        this.secret = secret.clone();
    }

    /** The secret's text, without surrounding whitespace, as UTF-8 bytes. */
    public static Auth ofSecret(String secret) {
        return new Auth(secret.strip().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The secret from {@code file} (surrounding whitespace ignored) or, when file is null, from $LOSSPROBE_SECRET.
     * {@code warnings} hears of a secret file every user can read and of a secret shorter than keygen's.
     */
    public static Auth load(Path file, Consumer<String> warnings) {
        Auth auth;
        if (file != null) {
            try {
                auth = ofSecret(Files.readString(file));
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the secret file " + file + ": " + e.getMessage());
            }
            readableByOthers(file).ifPresent(warnings);
        } else {
            String env = System.getenv(SECRET_ENV);
            if (env == null || env.isBlank()) {
                throw new IllegalArgumentException("a shared secret is required: --secret-file FILE or $"
                    + SECRET_ENV + " (make one with 'lossprobe keygen FILE')");
            }
            auth = ofSecret(env);
        }
        if (auth.secret.length < KEYGEN_BYTES) {
            warnings.accept("the shared secret is only " + auth.secret.length + " bytes: a guessable secret can be "
                + "found offline from one recorded handshake; 'lossprobe keygen FILE' makes a 256-bit one");
        }
        return auth;
    }

    private static java.util.Optional<String> readableByOthers(Path file) {
        try {
            // A group may be the service's own (docs/install.md: 0640 root:lossprobe), so only "others" warns.
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(file);
            if (p.contains(PosixFilePermission.OTHERS_READ)) {
                return java.util.Optional.of("the secret file " + file + " is readable by every user (mode "
                    + PosixFilePermissions.toString(p) + "): chmod o-r " + file);
            }
        } catch (UnsupportedOperationException | IOException e) {
            // No POSIX permissions here (or none readable): nothing to warn about.
        }
        return java.util.Optional.empty();
    }

    /**
     * {@code lossprobe keygen}: a new file holding {@link #KEYGEN_BYTES} random bytes in hex, created with mode 0600
     * (only its owner can read it). Refuses to overwrite an existing file.
     */
    public static void writeNewSecret(Path file) throws IOException {
        byte[] key = new byte[KEYGEN_BYTES];
        RANDOM.nextBytes(key);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            throw new IllegalArgumentException(file + " exists; keygen does not overwrite a secret");
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        }
        Files.writeString(file, HexFormat.of().formatHex(key) + "\n");
    }

    public static String nonce() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getEncoder().encodeToString(b);
    }

    /** The server's proof, given first: over the controller's nonce and its own. */
    String serverProof(String clientNonce, String serverNonce) {
        return Base64.getEncoder().encodeToString(hmac(secret, "lossprobe-v2|server|" + clientNonce + "|"
            + serverNonce));
    }

    /** The controller's proof, given once the server's checked out: over both nonces, under another label. */
    String clientProof(String clientNonce, String serverNonce) {
        return Base64.getEncoder().encodeToString(hmac(secret, "lossprobe-v2|client|" + clientNonce + "|"
            + serverNonce));
    }

    /**
     * The session's key, computed by both sides after the handshake and never sent: HMAC-SHA256 over the label and
     * both nonces, client's first. The run's data key is derived from it ({@link
     * io.lossprobe.core.wire.MessageAuth#derive}), and so are the frame keys.
     */
    public byte[] sessionKey(String clientNonce, String serverNonce) {
        return hmac(secret, "lossprobe-v1|session|" + clientNonce + "|" + serverNonce);
    }

    /** The key of one direction's frame MACs ({@code "client"} or {@code "server"}: who sends). */
    static byte[] frameKey(byte[] sessionKey, String sender) {
        return hmac(sessionKey, "lossprobe-v2|frames|" + sender);
    }

    private static byte[] hmac(byte[] key, String label) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(label.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Constant-time comparison, so the time taken tells an attacker nothing. */
    static boolean verify(String expected, String actual) {
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
            actual.getBytes(StandardCharsets.US_ASCII));
    }
}

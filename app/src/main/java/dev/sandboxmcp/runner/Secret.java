package dev.sandboxmcp.runner;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/** The per-start secret by which the runner proves itself to the server. Never logged, never in a string form but the wire's. */
public final class Secret {

    static final int BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] bytes;

    private Secret(byte[] bytes) {
        this.bytes = bytes;
    }

    /** A fresh secret. */
    static Secret random() {
        byte[] bytes = new byte[BYTES];
        RANDOM.nextBytes(bytes);
        return new Secret(bytes);
    }

    /** The secret written as {@link #hex}; anything else is a violation. */
    static Secret fromHex(String hex) throws Protocol.Violation {
        if (hex.length() != BYTES * 2 || !hex.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            throw new Protocol.Violation("a secret that is not " + BYTES * 2 + " lower-case hex digits");
        }
        return new Secret(HexFormat.of().parseHex(hex));
    }

    String hex() {
        return HexFormat.of().formatHex(bytes);
    }

    /** In constant time. */
    boolean matches(Secret other) {
        return other != null && MessageDigest.isEqual(bytes, other.bytes);
    }

    @Override
    public String toString() {
        return "Secret[hidden]";
    }
}

package dev.sandboxmcp.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The SHA-256 digest of the bearer token. The server keeps only this: requests are checked by
 * hashing the token they carry and comparing digests in constant time, and a deployment can hand
 * the server the digest alone ({@code MCP_AUTH_TOKEN_SHA256}) so the token itself never enters the
 * container.
 */
public final class TokenDigest {

    private final byte[] digest;

    private TokenDigest(byte[] digest) {
        this.digest = digest;
    }

    public static TokenDigest of(String token) {
        return new TokenDigest(sha256(token));
    }

    public static TokenDigest ofHex(String hex) {
        return new TokenDigest(HexFormat.of().parseHex(hex));
    }

    /** Whether {@code candidate} is the token; takes the same time whatever the candidate. */
    public boolean matches(String candidate) {
        return MessageDigest.isEqual(sha256(candidate), digest);
    }

    @Override
    public String toString() {
        return "TokenDigest[sha256]";
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TokenDigest that && MessageDigest.isEqual(digest, that.digest);
    }

    @Override
    public int hashCode() {
        return digest[0];
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}

package dev.sandboxmcp.exec;

import java.nio.charset.StandardCharsets;

/** Cutting UTF-8 bytes without splitting a character. */
final class TextCut {

    private TextCut() {
    }

    /** The bytes as text; invalid UTF-8 becomes U+FFFD. */
    static String decode(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** How many continuation bytes {@code bytes} starts with (at most 3): where a suffix's first whole character starts. */
    static int continuationPrefix(byte[] bytes) {
        int i = 0;
        while (i < Math.min(3, bytes.length) && (bytes[i] & 0xC0) == 0x80) {
            i++;
        }
        return i;
    }

    static long newlines(byte[] bytes) {
        long n = 0;
        for (byte b : bytes) {
            if (b == '\n') {
                n++;
            }
        }
        return n;
    }
}

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

    /** Length of the longest prefix of {@code bytes[0, n)} that does not end inside a multi-byte sequence. */
    static int completeUtf8Prefix(byte[] bytes, int n) {
        for (int back = 1; back <= Math.min(3, n); back++) {
            int b = bytes[n - back] & 0xff;
            if ((b & 0xC0) == 0x80) {
                continue; // continuation byte: keep looking for the lead
            }
            int needed = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
            return needed > back ? n - back : n;
        }
        return n;
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

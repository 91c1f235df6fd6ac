package dev.sandboxmcp.exec;

import java.util.Arrays;

/**
 * The bytes UTF-8 text takes inside a JSON string as the runner's channel writes it (Jackson's
 * defaults): a control character below 0x20 is six (a backslash, u and four hex digits) or two
 * (newline, tab, carriage return, backspace, form feed: a backslash and a letter), a quote and a
 * backslash are two, every other byte is itself, non-ASCII included. Pages of files and of command output are bounded by this
 * size, not by their raw bytes, so that a page of control characters is no larger an answer than
 * a page of plain text. {@code EscapedSizeTest} holds the table to what the channel writes.
 */
public final class EscapedSize {

    /** What an ill-formed byte of command output becomes once decoded: U+FFFD, three bytes. */
    static final int REPLACEMENT_BYTES = 3;

    private static final byte[] COST = new byte[256];

    static {
        Arrays.fill(COST, (byte) 1);
        for (int c = 0; c < 0x20; c++) {
            COST[c] = 6;
        }
        for (char c : new char[] {'\n', '\t', '\r', '\b', '\f', '"', '\\'}) {
            COST[c] = 2;
        }
    }

    private EscapedSize() {
    }

    /** The size of one byte of well-formed UTF-8 text. */
    public static int of(byte b) {
        return COST[b & 0xFF];
    }

    /** The size of {@code bytes[from, to)}, well-formed UTF-8 (a file that decodes). */
    public static long of(byte[] bytes, int from, int to) {
        long size = 0;
        for (int i = from; i < to; i++) {
            size += COST[bytes[i] & 0xFF];
        }
        return size;
    }

    /**
     * The size of {@code text} as the channel writes it: UTF-8, with the escapes above; half a
     * surrogate pair (no decoded text holds one) as a six-byte escape.
     */
    public static long of(CharSequence text) {
        long size = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                size += COST[c];
            } else if (c < 0x800) {
                size += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                size += 4;
                i++;
            } else {
                size += Character.isSurrogate(c) ? 6 : 3;
            }
        }
        return size;
    }

    /** The end of the longest run {@code bytes[from, end)} of well-formed UTF-8 whose size is at most {@code budget}. */
    public static int fit(byte[] bytes, int from, int to, long budget) {
        long size = 0;
        int i = from;
        while (i < to) {
            size += COST[bytes[i] & 0xFF];
            if (size > budget) {
                break;
            }
            i++;
        }
        return i;
    }

    /**
     * Where to end a page of command output, which may hold any bytes, taken from
     * {@code bytes[0, length)}: the end of the longest prefix whose decoded text (an ill-formed
     * byte becomes U+FFFD) is at most {@code budget} as JSON, never inside a well-formed character.
     * A character cut off by {@code length} is left for the next page unless {@code atEnd}, when
     * nothing follows and its bytes are ill-formed.
     */
    public static int fitDecoded(byte[] bytes, int length, long budget, boolean atEnd) {
        long size = 0;
        int i = 0;
        while (i < length) {
            int sequence = wellFormed(bytes, i, length);
            if (sequence < 0 && !atEnd) {
                break;
            }
            size += decodedSize(bytes, i, sequence);
            if (size > budget) {
                break;
            }
            i += advance(sequence);
        }
        return i;
    }

    /** The size of {@code bytes[from, to)} of command output once decoded, nothing following it. */
    static long ofDecoded(byte[] bytes, int from, int to) {
        long size = 0;
        for (int i = from; i < to; ) {
            int sequence = wellFormed(bytes, i, to);
            size += decodedSize(bytes, i, sequence);
            i += advance(sequence);
        }
        return size;
    }

    /**
     * Where the longest end {@code bytes[start, to)} of command output that is at most
     * {@code budget} once decoded starts, reading its characters from {@code from}.
     */
    static int lastDecoded(byte[] bytes, int from, int to, long budget) {
        long size = ofDecoded(bytes, from, to);
        int start = from;
        while (size > budget && start < to) {
            int sequence = wellFormed(bytes, start, to);
            size -= decodedSize(bytes, start, sequence);
            start += advance(sequence);
        }
        return start;
    }

    private static int decodedSize(byte[] bytes, int i, int sequence) {
        return sequence == 1 ? COST[bytes[i] & 0xFF] : sequence > 1 ? sequence : REPLACEMENT_BYTES;
    }

    /** Ill-formed (0) or cut-off (-1) bytes are decoded one at a time, as U+FFFD at most each. */
    private static int advance(int sequence) {
        return sequence > 0 ? sequence : 1;
    }

    /**
     * The length of the well-formed UTF-8 character at {@code bytes[i]} (Unicode's table 3-7, as
     * Java's decoder reads it), 0 when it is ill-formed, -1 when {@code length} cuts it off.
     */
    private static int wellFormed(byte[] bytes, int i, int length) {
        int lead = bytes[i] & 0xFF;
        if (lead < 0x80) {
            return 1;
        }
        int n;
        int low = 0x80;
        int high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            n = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            n = 3;
            low = lead == 0xE0 ? 0xA0 : 0x80;
            high = lead == 0xED ? 0x9F : 0xBF;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            n = 4;
            low = lead == 0xF0 ? 0x90 : 0x80;
            high = lead == 0xF4 ? 0x8F : 0xBF;
        } else {
            return 0;
        }
        for (int k = 1; k < n; k++) {
            if (i + k >= length) {
                return -1;
            }
            int b = bytes[i + k] & 0xFF;
            if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) {
                return 0;
            }
        }
        return n;
    }
}

package dev.sandboxmcp;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The process's log stream (standard error, where slf4j-simple writes), which keeps one log
 * record on one line whatever a value in it holds: a request id, a cancel reason, a runner's
 * protocol error, an exception's message. Inside every piece of text printed, a line break,
 * any other control character, U+2028 and U+2029, and half of a surrogate pair are written as
 * escapes ({@code \n}, {@code \\u2028}), so no value a client or the runner sent can end a line
 * and start one of its own, such as a forged audit line in {@code docker logs}. Only the line
 * ends that {@code println} adds remain. Escaping here, at the one place every log line passes,
 * rather than at each logging call, covers the calls written tomorrow too.
 */
final class LogLines extends PrintStream {

    LogLines(OutputStream out) {
        super(out, true, StandardCharsets.UTF_8);
    }

    /** Every print of text ends here, {@code println(String)} and {@code println(Object)} too. */
    @Override
    public void print(String text) {
        super.print(escaped(String.valueOf(text)));
    }

    @Override
    public void print(Object value) {
        print(String.valueOf(value));
    }

    @Override
    public void print(char[] text) {
        print(new String(text));
    }

    @Override
    public void print(char c) {
        print(String.valueOf(c));
    }

    /** {@code text} with what could break or fake a line escaped; the same string when nothing needs it. */
    static String escaped(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1));
            if (paired) {
                if (out != null) {
                    out.append(c).append(text.charAt(i + 1));
                }
                i++;
                continue;
            }
            String escape = escape(c);
            if (escape != null && out == null) {
                out = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (out != null) {
                out.append(escape != null ? escape : String.valueOf(c));
            }
        }
        return out == null ? text : out.toString();
    }

    private static String escape(char c) {
        return switch (c) {
            case '\n' -> "\\n";
            case '\r' -> "\\r";
            case '\t' -> null;
            default -> c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029' || Character.isSurrogate(c)
                    ? "\\u%04x".formatted((int) c) : null;
        };
    }
}

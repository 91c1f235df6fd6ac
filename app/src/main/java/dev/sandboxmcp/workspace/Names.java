package dev.sandboxmcp.workspace;

import dev.sandboxmcp.WholeChars;

/**
 * File names as they may appear in the text a tool returns. A name is whatever a command chose,
 * so it can hold a newline, an escape sequence or a bidi override that makes the text say
 * something else (a name {@code "a (3 bytes)\nIMPORTANT.md"} forges a second listing line). Such
 * a name is shown Go-quoted ({@code "a (3 bytes)\nIMPORTANT.md"}, {@code \x1b}, {@code \u2028});
 * every other name is shown as it is. Structured results keep the real name: JSON escapes it.
 */
public final class Names {

    /**
     * The longest path a tool call may give, in characters: Linux's PATH_MAX (4096 bytes, the
     * terminating NUL included), past which the kernel names no file. The tools' input schemas
     * say so ({@code maxLength}), so the server refuses a longer one before the runner sees it; a
     * name in a message is shown to this many characters ({@link #quoted}).
     */
    public static final int MAX_PATH_CHARS = 4096;

    private Names() {
    }

    /** The name unchanged when it is safe to print, otherwise quoted and escaped. */
    public static String display(String name) {
        return needsQuoting(name) ? quote(name) : name;
    }

    /**
     * For messages: the name in single quotes, or quoted and escaped when it needs it. A name longer
     * than {@link #MAX_PATH_CHARS} (none a call can give) is shown to that many characters, and how
     * many it has: a message never echoes more of a name than that, whatever sent it.
     */
    public static String quoted(String name) {
        if (name.length() > MAX_PATH_CHARS) {
            return quoted(WholeChars.prefix(name, MAX_PATH_CHARS)) + "... (" + name.length() + " characters)";
        }
        return needsQuoting(name) ? quote(name) : "'" + name + "'";
    }

    /** Whether {@link #display} changes the name: it holds a character to escape or starts with a quote. */
    public static boolean needsQuoting(String name) {
        return name.startsWith("\"") || name.codePoints().anyMatch(Names::isUnsafe);
    }

    /** Control characters (C0, DEL, C1), line and paragraph separators, and bidi controls. */
    static boolean isUnsafe(int c) {
        return Character.isISOControl(c)
                || c == '\u2028' || c == '\u2029'
                || c == '\u061c' || c == '\u200e' || c == '\u200f'
                || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069');
    }

    private static String quote(String name) {
        StringBuilder out = new StringBuilder(name.length() + 8).append('"');
        name.codePoints().forEach(c -> {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (!isUnsafe(c)) {
                        out.appendCodePoint(c);
                    } else if (c < 0x80) {
                        out.append(String.format("\\x%02x", c));
                    } else {
                        out.append(String.format("\\u%04x", c));
                    }
                }
            }
        });
        return out.append('"').toString();
    }
}

package dev.sandboxmcp;

/** A string's first characters, for a message or a log that shows only so many: never half of a surrogate pair. */
public final class WholeChars {

    private WholeChars() {
    }

    /**
     * {@code text} itself when it has at most {@code chars} chars; else its first {@code chars}, or
     * one fewer where the last would be the first half of a surrogate pair.
     */
    public static String prefix(String text, int chars) {
        if (text.length() <= chars) {
            return text;
        }
        return text.substring(0, Character.isHighSurrogate(text.charAt(chars - 1)) ? chars - 1 : chars);
    }
}

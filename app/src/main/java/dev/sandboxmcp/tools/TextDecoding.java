package dev.sandboxmcp.tools;

import dev.sandboxmcp.workspace.Names;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Strict UTF-8 for files: invalid bytes or text are an error, never silently replaced. */
final class TextDecoding {

    private TextDecoding() {
    }

    private static CharsetDecoder strictDecoder() {
        return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
    }

    /** The text, or null when the bytes are not valid UTF-8. */
    static String decode(byte[] bytes) {
        try {
            return strictDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** The UTF-8 bytes, or null when the text is not valid Unicode (an unpaired surrogate). */
    static byte[] encode(String text) {
        try {
            ByteBuffer encoded = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(text));
            byte[] bytes = new byte[encoded.remaining()];
            encoded.get(bytes);
            return bytes;
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /**
     * Where to cut {@code bytes[from, to)} so that no UTF-8 character is split: {@code to}, or the
     * start of a character the range holds only part of. Invalid bytes are left for the decoder.
     */
    static int characterBoundary(byte[] bytes, int from, int to) {
        int lead = to - 1;
        while (lead > from && lead > to - 4 && (bytes[lead] & 0xC0) == 0x80) {
            lead--;
        }
        if (lead < from) {
            return to;
        }
        int b = bytes[lead] & 0xFF;
        int length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        return lead + length > to ? lead : to;
    }

    static String notUtf8(String path) {
        return Names.quoted(path)
                + " is not valid UTF-8 text (a binary file?); inspect it with run_command, e.g. file, xxd or hexdump";
    }

    static String binary(String path) {
        return Names.quoted(path)
                + " contains NUL bytes, so it is binary, not text; inspect it with run_command, e.g. file, xxd or hexdump";
    }
}

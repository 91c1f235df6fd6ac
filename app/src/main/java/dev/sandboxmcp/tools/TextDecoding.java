package dev.sandboxmcp.tools;

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

    static CharsetDecoder strictDecoder() {
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

    static String notUtf8(String path) {
        return "'" + path + "' is not valid UTF-8 text (a binary file?); inspect it with run_command, e.g. file, xxd or hexdump";
    }

    static String binary(String path) {
        return "'" + path + "' contains NUL bytes, so it is binary, not text; inspect it with run_command, e.g. file, xxd or hexdump";
    }
}

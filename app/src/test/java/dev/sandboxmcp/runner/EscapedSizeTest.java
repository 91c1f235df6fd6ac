package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.exec.EscapedSize;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link EscapedSize} counts what the channel's encoder writes, byte value by byte value. */
class EscapedSizeTest {

    /** The bytes {@code text} adds to a reply line, which carries it twice (text and structured). */
    private static long twiceOnTheLine(String text) {
        return Protocol.encode(reply(text)).length - Protocol.encode(reply("")).length;
    }

    private static Protocol.Reply reply(String text) {
        return new Protocol.Reply(1, false, text, Map.of("content", text), null, 0L, false);
    }

    @Test
    void everyAsciiCharacterCostsWhatTheEncoderWrites() {
        for (int c = 0; c < 0x80; c++) {
            String text = String.valueOf((char) c).repeat(10);
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            assertThat(twiceOnTheLine(text)).as("U+%04X", c).isEqualTo(2 * EscapedSize.of(bytes, 0, bytes.length));
        }
        assertThat(EscapedSize.of((byte) 1)).isEqualTo(6);
        assertThat(EscapedSize.of((byte) '\n')).isEqualTo(2);
        assertThat(EscapedSize.of((byte) 'a')).isEqualTo(1);
    }

    @Test
    void nonAsciiIsWrittenRawSoItCostsItsUtf8Bytes() {
        for (String text : new String[] {"é", "中", "\uFFFD", "\u2028", "😀", "\u007F\u0080\u07FF\u0800\uFFFF"}) {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            assertThat(twiceOnTheLine(text)).as(text).isEqualTo(2L * bytes.length)
                    .isEqualTo(2 * EscapedSize.of(bytes, 0, bytes.length));
        }
    }

    @Test
    void aStringCostsWhatTheEncoderWritesLoneSurrogatesIncluded() {
        StringBuilder ascii = new StringBuilder();
        for (char c = 0; c < 0x80; c++) {
            ascii.append(c);
        }
        for (String text : new String[] {ascii.toString(), "é中\uFFFD\u2028😀", "\ud800", "a\udc00b", "😀\ud83d",
            "\u007F\u0080\u07FF\u0800\uFFFF"}) {
            assertThat(twiceOnTheLine(text)).as(text).isEqualTo(2 * EscapedSize.of(text));
        }
    }

    @Test
    void fitStopsBeforeTheByteThatWouldPassTheBudget() {
        byte[] bytes = "ab\u0001c".getBytes(StandardCharsets.UTF_8);
        assertThat(EscapedSize.fit(bytes, 0, bytes.length, 7)).isEqualTo(2);
        assertThat(EscapedSize.fit(bytes, 0, bytes.length, 8)).isEqualTo(3);
        assertThat(EscapedSize.fit(bytes, 0, bytes.length, 100)).isEqualTo(4);
    }

    @Test
    void decodedOutputOfAnyBytesIsNeverLargerThanCounted() {
        Random random = new Random(7);
        byte[] pool = {0, 1, '\n', '"', '\\', 'a', (byte) 0x80, (byte) 0xBF, (byte) 0xC2, (byte) 0xC0, (byte) 0xE0,
            (byte) 0xED, (byte) 0xA0, (byte) 0xF0, (byte) 0xF4, (byte) 0x90, (byte) 0xFF, (byte) 0xE4, (byte) 0xB8};
        for (int round = 0; round < 2000; round++) {
            byte[] bytes = new byte[random.nextInt(40)];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = random.nextBoolean() ? pool[random.nextInt(pool.length)] : (byte) random.nextInt(256);
            }
            long budget = random.nextInt(120);
            int end = EscapedSize.fitDecoded(bytes, bytes.length, budget, true);
            String shown = new String(bytes, 0, end, StandardCharsets.UTF_8);
            assertThat(twiceOnTheLine(shown)).as("%s within %d", java.util.HexFormat.of().formatHex(bytes), budget)
                    .isLessThanOrEqualTo(2 * budget);
        }
    }
}

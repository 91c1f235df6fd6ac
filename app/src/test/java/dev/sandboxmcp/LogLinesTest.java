package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import java.util.logging.StreamHandler;
import org.junit.jupiter.api.Test;

class LogLinesTest {

    @Test
    void whatCouldBreakALineIsEscapedAndTheRestKept() {
        assertThat(LogLines.escaped("plain text, tabs\tand é and 😀")).isEqualTo("plain text, tabs\tand é and 😀");
        assertThat(LogLines.escaped("a\nb\r\nc\u2028d\u2029e\u0085f\u0000g\u001b[2Kh\u007f"))
                .isEqualTo("a\\nb\\r\\nc\\u2028d\\u2029e\\u0085f\\u0000g\\u001b[2Kh\\u007f");
        assertThat(LogLines.escaped("lone \ud800 and \udc00, a pair \ud83d\ude00, reversed \ude00\ud83d"))
                .isEqualTo("lone \\ud800 and \\udc00, a pair \ud83d\ude00, reversed \\ude00\\ud83d");
    }

    @Test
    void everyWayOfPrintingEndsInOneLine() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (LogLines out = new LogLines(bytes)) {
            out.println("one\n{\"event\":\"tool_call\"}");
            out.println((Object) new IllegalStateException("two\n{\"event\":\"tool_call\"}"));
            out.printf("three %s%n", "\r{\"event\":\"tool_call\"}");
            out.print('\n');
            out.println(new char[] {'f', '\n', 'v'});
        }
        assertThat(bytes.toString(StandardCharsets.UTF_8).split("\n", -1)).containsExactly(
                "one\\n{\"event\":\"tool_call\"}",
                "java.lang.IllegalStateException: two\\n{\"event\":\"tool_call\"}",
                "three \\r{\"event\":\"tool_call\"}\\n\\nf\\nv", // only println ends a line: printf's %n does not
                "");
    }

    @Test
    void bytesWrittenAsBytesAndJavaUtilLoggingEndInOneLineToo() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (LogLines out = new LogLines(bytes)) {
            out.writeBytes("raw\n{\"event\":\"tool_call\"}\r\u001b[2K\té\n".getBytes(StandardCharsets.UTF_8));
            for (byte b : "bytes one at a time\n{\"event\":\"tool_call\"}".getBytes(StandardCharsets.UTF_8)) {
                out.write(b);
            }
            out.println();
            StreamHandler handler = new StreamHandler(out, new SimpleFormatter());
            handler.publish(new LogRecord(Level.WARNING, "jul\n{\"event\":\"tool_call\"}"));
            handler.flush();
        }
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n", -1);
        assertThat(lines).hasSize(4);
        assertThat(lines[0]).isEqualTo("raw\\n{\"event\":\"tool_call\"}\\r\\u001b[2K\té");
        assertThat(lines[2]).contains("\\nWARNING: jul\\n{\"event\":\"tool_call\"}");
        assertThat(lines).noneMatch(line -> line.startsWith("{"));
    }

    @Test
    void noLineIsLongerThanTheBoundAndACutLineSaysSo() {
        int max = LogLines.MAX_LINE_BYTES;
        // A notification's method the SDK logs whole: whitespace, a forged audit object, whitespace.
        String forged = " ".repeat(16384) + "{\"time\":\"2025-01-01T00:00:00Z\",\"event\":\"tool_call\"}" + " ".repeat(16384);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (LogLines out = new LogLines(bytes)) {
            out.println("[main] WARN Missing handler for notification type: " + forged);
            out.println("x".repeat(max)); // exactly the bound: whole
            out.print("y".repeat(max - 1));
            out.println("\u0101 and more"); // a character begun within the bound is kept whole
            out.writeBytes(("z".repeat(3 * max) + "\n").getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < 3; i++) {
                out.print("w".repeat(max)); // one line written in parts
            }
            out.println();
            out.println("short again");
        }
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n", -1);
        assertThat(lines).hasSize(7);
        assertThat(lines).allSatisfy(line ->
                assertThat(line.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(max + 40));
        assertThat(lines[0]).startsWith("[main] WARN Missing handler").doesNotContain("tool_call")
                .endsWith(" [line cut: " + (("[main] WARN Missing handler for notification type: " + forged).length()
                        - max) + " more bytes]");
        assertThat(lines[1]).isEqualTo("x".repeat(max));
        assertThat(lines[2]).isEqualTo("y".repeat(max - 1) + "\u0101 [line cut: 9 more bytes]");
        assertThat(lines[3]).isEqualTo("z".repeat(max) + " [line cut: " + 2 * max + " more bytes]");
        assertThat(lines[4]).isEqualTo("w".repeat(max) + " [line cut: " + 2 * max + " more bytes]");
        assertThat(lines[5]).isEqualTo("short again");
        assertThat(lines[6]).isEmpty();
    }
}

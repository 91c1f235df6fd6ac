package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
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
}

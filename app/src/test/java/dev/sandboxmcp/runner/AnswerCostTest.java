package dev.sandboxmcp.runner;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * What an answer of the runner costs the server per byte of its line ({@link RunnerLink#ANSWER_COST_PER_BYTE}),
 * measured as the bytes the SDK's writing of the result allocates (all of it live at its end: the
 * buffer, the string and its copy), for the text of each width and escape: plain ASCII, control
 * characters (six bytes each as JSON), quotes (two) and CJK (three bytes in UTF-8, two in a Java
 * string). The parsed answer's own strings take at most the line's bytes, the last one of the five.
 */
class AnswerCostTest {

    static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    @Test
    void writingAResultCostsTheSdkAtMostFourBytesPerByteOfItsLine() throws Exception {
        var json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        Bounds bounds = new Bounds(64 << 20, 1 << 20, 64, 64 << 20);
        for (int round = 0; round < 3; round++) { // the first round warms up
            for (String unit : new String[] {"a", "\u0001", "\"", "\u4e2d"}) {
                String text = unit.repeat(1 << 20);
                byte[] line = Protocol.encode(new Protocol.Reply(7, false, text, Map.of("content", text), null, 0L, false));
                Protocol.Reply reply = (Protocol.Reply) Protocol.decode(line, line.length - 1, Protocol.Sender.RUNNER,
                        Protocol.Phase.ESTABLISHED, bounds.factory());
                long before = allocated();
                var result = McpSchema.CallToolResult.builder().addTextContent(reply.text())
                        .structuredContent(reply.structured()).isError(false).build();
                String out = json.writeValueAsString(new McpSchema.JSONRPCResponse("2.0", 1, result, null));
                double perByte = (allocated() - before) / (double) line.length;
                System.out.printf("U+%04X: a line of %d bytes, written as %d chars: %.4f bytes a byte%n", (int) unit.charAt(0),
                        line.length, out.length(), perByte);
                if (round > 0) {
                    assertThat(perByte).as("U+%04X", (int) unit.charAt(0)).isLessThanOrEqualTo(RunnerLink.ANSWER_COST_PER_BYTE - 1 + 0.01);
                }
            }
        }
    }
}

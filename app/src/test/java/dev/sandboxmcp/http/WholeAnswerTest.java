package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Streamable HTTP answer that fits the output buffer goes out whole, with its length (one write,
 * not a chunk and then its end); a larger one still arrives whole.
 */
class WholeAnswerTest {

    static final String HEADERS = "Authorization: Bearer " + TestServer.TOKEN + "\r\n"
            + "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

    @Test
    void anAnswerGoesOutWithItsLengthAndALargeOneWhole(@TempDir Path workspace) throws Exception {
        Files.writeString(workspace.resolve("small.txt"), "line\n".repeat(800));
        Files.writeString(workspace.resolve("large.txt"), ("x".repeat(99) + "\n").repeat(2000));
        try (TestServer server = TestServer.start(workspace)) {
            RawHttp.Response small = read(server, "small.txt");
            assertThat(small.status()).isEqualTo(200);
            assertThat(small.body()).contains("\"total_lines\":800");
            assertThat(small.head().toLowerCase()).doesNotContain("transfer-encoding")
                    .contains("content-length: " + small.body().getBytes(StandardCharsets.UTF_8).length + "\r\n");

            RawHttp.Response large = read(server, "large.txt");
            assertThat(large.status()).isEqualTo(200);
            assertThat(large.body().getBytes(StandardCharsets.UTF_8).length).isGreaterThan(64 * 1024);
            assertThat(large.body()).startsWith("{").endsWith("}").contains("\"total_lines\":2000");
        }
    }

    static RawHttp.Response read(TestServer server, String path) throws Exception {
        return RawHttp.post(server.port(), "/mcp-sandbox/mcp", HEADERS, "{\"jsonrpc\":\"2.0\",\"id\":1,"
                + "\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"" + path + "\"}}}");
    }
}

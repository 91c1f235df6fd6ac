package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK answers a message whose params do not fit their types with 200 and a JSON-RPC error
 * holding the exception's text, which named Jackson's exception class and the SDK's types. Both
 * transports now answer with where the value is, and no Java.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SdkErrorWordsTest {

    static final String CAPABILITIES_AN_ARRAY = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
            "capabilities":[],"clientInfo":{"name":"x","version":"1"}}}""";
    static final String VERSION_AN_OBJECT = """
            {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":{},
            "capabilities":{},"clientInfo":{"name":"x","version":"1"}}}""";

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    private static void assertNoJava(String answer, String where) {
        assertThat(answer).as(answer).contains("\"error\"").contains(where).doesNotContain("Exception")
                .doesNotContain("io.modelcontextprotocol").doesNotContain("tools.jackson").doesNotContain("java.");
    }

    @Test
    void streamableHttp() throws Exception {
        try (SseStream sse = new SseStream(server)) { // only for its client; the call goes to <base>/mcp
            for (String[] shape : new String[][] {{CAPABILITIES_AN_ARRAY, "capabilities"}, {VERSION_AN_OBJECT, "protocolVersion"}}) {
                HttpResponse<String> answer = sse.post("/mcp-sandbox/mcp", shape[0]);
                assertNoJava(answer.body(), shape[1]);
            }
        }
    }

    @Test
    void httpPlusSse() throws Exception {
        for (String[] shape : new String[][] {{CAPABILITIES_AN_ARRAY, "capabilities", "\"id\":1,"},
                {VERSION_AN_OBJECT, "protocolVersion", "\"id\":2,"}}) {
            try (SseStream sse = new SseStream(server)) {
                assertThat(sse.post(sse.endpoint, shape[0]).statusCode()).isEqualTo(200);
                assertNoJava(sse.awaitEvent(shape[2]), shape[1]);
            }
        }
    }
}

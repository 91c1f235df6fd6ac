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
 * An HTTP+SSE session's requests before it has sent {@code notifications/initialized}: the SDK
 * held them with no deadline, so a raw client's {@code ping} (or a padded one, holding the body
 * budget) was never answered and held its connection for good. Now it is refused at once, and
 * the session works once initialized.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SessionStartTest {

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    @Test
    void aRequestBeforeTheSessionIsInitializedIsRefusedAtOnceAndTheSessionWorksAfter() throws Exception {
        try (SseStream sse = new SseStream(server)) {
            assertThat(sse.endpoint).startsWith("/mcp-sandbox/message?sessionId=");
            HttpResponse<String> early = sse.post(sse.endpoint, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\","
                    + "\"params\":{\"pad\":\"" + "x".repeat(100_000) + "\"}}");
            assertThat(early.statusCode()).as(early.body()).isEqualTo(400);
            assertThat(early.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":11,\"error\":{\"code\":-32600,")
                    .contains("has not been initialized").contains("notifications/initialized");
            HttpResponse<String> unknown = sse.post("/mcp-sandbox/message?sessionId=no-such-session",
                    "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\"}");
            assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(400);

            // A notification the SDK has a handler for waits on the same handshake.
            HttpResponse<String> notification = sse.post(sse.endpoint, "{\"jsonrpc\":\"2.0\","
                    + "\"method\":\"notifications/roots/list_changed\",\"params\":{\"pad\":\"" + "x".repeat(100_000) + "\"}}");
            assertThat(notification.statusCode()).as(notification.body()).isEqualTo(400);
            // The handshake's notification sent with an id is a request the SDK refuses: it initializes nothing.
            sse.post(sse.endpoint, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"notifications/initialized\"}");
            assertThat(sse.post(sse.endpoint, "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}").statusCode()).isEqualTo(400);
            // A session the SDK does not know is never remembered (the SDK answers its handshake 404).
            String made = "/mcp-sandbox/message?sessionId=made-up";
            assertThat(sse.post(made, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").statusCode())
                    .isEqualTo(404);
            assertThat(sse.post(made, "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"ping\"}").statusCode()).isEqualTo(400);

            assertThat(sse.post(sse.endpoint, HttpBoundaryTest.INITIALIZE).statusCode()).isEqualTo(200);
            assertThat(sse.awaitEvent("\"id\":1,")).contains("\"serverInfo\"");
            assertThat(sse.post(sse.endpoint, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").statusCode())
                    .isEqualTo(200);
            assertThat(sse.post(sse.endpoint, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\"}").statusCode()).isEqualTo(200);
            assertThat(sse.awaitEvent("\"id\":13,")).contains("\"result\"");
        }
    }
}

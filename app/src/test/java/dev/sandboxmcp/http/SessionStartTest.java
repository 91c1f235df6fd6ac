package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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

    static final int CONNECTIONS = 8;
    static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"ping\"}";

    TestServer server;
    /** Few connections, and a keep-alive ping every second: a stream whose client left ends within seconds. */
    TestServer small;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
        small = TestServer.start(workspace, Map.of("MCP_MAX_CONNECTIONS", String.valueOf(CONNECTIONS),
                "MCP_KEEPALIVE_SECONDS", "1"));
    }

    @AfterAll
    void stop() {
        server.close();
        small.close();
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

    @Test
    void aSessionStaysKnownWhileItsStreamIsOpenHoweverManyOthersComeAndGo() throws Exception {
        // Sessions were remembered up to twice the connection cap, the least recently used
        // forgotten first: a token holder's short sessions pushed out a live one, whose every
        // later request was then refused. Now a session is known as long as its stream is open.
        try (SseStream kept = initialized()) {
            int churned = 2 * CONNECTIONS + 4;
            for (int i = 0; i < churned; i++) {
                initialized().close();
            }
            HttpResponse<String> ping = kept.post(kept.endpoint, PING);
            assertThat(ping.statusCode()).as("after %d sessions came and went: %s", churned, ping.body()).isEqualTo(200);
            assertThat(kept.awaitEvent("\"id\":21,")).contains("\"result\"");
        }
    }

    @Test
    void aSessionWhoseStreamEndedIsForgotten() throws Exception {
        String endpoint;
        try (SseStream ended = initialized()) {
            endpoint = ended.endpoint;
        }
        // The server learns that the client left when its next keep-alive ping cannot be written.
        try (SseStream other = initialized()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            HttpResponse<String> answer;
            do {
                Thread.sleep(200);
                answer = other.post(endpoint, PING);
            } while (answer.statusCode() != 400 && System.nanoTime() < deadline);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
            assertThat(answer.body()).contains("its event stream has ended");
        }
    }

    /**
     * An initialized session of the small server. While its connections are all taken (a 503 for
     * the stream or a message: those of streams whose clients left are closed at the next
     * keep-alive), tried again with a new stream.
     */
    private SseStream initialized() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            String refusal;
            SseStream stream = null;
            try {
                stream = new SseStream(small);
                if (stream.status() == 200 && stream.endpoint != null) {
                    stream.initialize();
                    return stream;
                }
                refusal = "the stream's status " + stream.status();
            } catch (AssertionError refused) {
                if (!refused.getMessage().contains(": 503 ")) {
                    throw refused;
                }
                refusal = refused.getMessage();
            } catch (IOException closed) { // a connection over the cap may be closed before its 503 is read
                refusal = closed.toString();
            }
            if (stream != null) {
                stream.close();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no session within 20 s: " + refusal);
            }
            Thread.sleep(100);
        }
    }
}

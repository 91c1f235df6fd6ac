package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.TestServer;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
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

    TestServer server;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    private HttpResponse<String> post(String endpoint, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(server.url(endpoint)))
                .timeout(Duration.ofSeconds(5))
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRequestBeforeTheSessionIsInitializedIsRefusedAtOnceAndTheSessionWorksAfter() throws Exception {
        HttpResponse<InputStream> stream = http.send(HttpRequest.newBuilder(URI.create(server.url("/mcp-sandbox/sse")))
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Accept", "text/event-stream").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        BlockingQueue<String> data = new LinkedBlockingQueue<>();
        Thread reader = Thread.ofVirtual().start(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    if (line.startsWith("data: ")) {
                        data.add(line.substring("data: ".length()));
                    }
                }
            } catch (Exception closed) {
                // the stream is closed when the test ends
            }
        });
        try {
            String endpoint = data.poll(5, TimeUnit.SECONDS);
            assertThat(endpoint).startsWith("/mcp-sandbox/message?sessionId=");

            HttpResponse<String> early = post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\",\"params\":{\"pad\":\""
                    + "x".repeat(100_000) + "\"}}");
            assertThat(early.statusCode()).as(early.body()).isEqualTo(400);
            assertThat(early.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":11,\"error\":{\"code\":-32600,")
                    .contains("has not been initialized").contains("notifications/initialized");
            HttpResponse<String> unknown = post("/mcp-sandbox/message?sessionId=no-such-session",
                    "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\"}");
            assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(400);

            assertThat(post(endpoint, HttpBoundaryTest.INITIALIZE).statusCode()).isEqualTo(200);
            assertThat(awaitAnswer(data, "\"id\":1,")).contains("\"serverInfo\"");
            assertThat(post(endpoint, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").statusCode())
                    .isEqualTo(200);
            assertThat(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\"}").statusCode()).isEqualTo(200);
            assertThat(awaitAnswer(data, "\"id\":13,")).contains("\"result\"");
        } finally {
            stream.body().close();
            reader.interrupt();
        }
    }

    /** The next event on the stream that holds {@code marker}; keep-alive pings skipped. */
    private static String awaitAnswer(BlockingQueue<String> data, String marker) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            String event = data.poll(1, TimeUnit.SECONDS);
            if (event != null && event.contains(marker)) {
                return event;
            }
        }
        throw new AssertionError("no event with " + marker + " within 10 s");
    }
}

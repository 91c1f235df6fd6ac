package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.tools.ToolCatalog;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The edge of each bound on a message body, on a server with the smallest size limit (64 KiB, so
 * 1,024 tokens): at the limit a message is answered, one past it is refused with a JSON-RPC error
 * that names the limit. And a 20 MiB body at the default limit gets an error naming that limit.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BodyLimitsTest {

    static final int MAX_BYTES = 64 * 1024;
    static final JsonBounds BOUNDS = JsonBounds.forBodies(MAX_BYTES, ToolCatalog.definitions(Limits.defaults()).longestName());
    static final String AUTH = "Authorization: Bearer " + TestServer.TOKEN + "\r\n";
    static final String JSON = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    /** A ping whose params carry {@code pad}: 14 tokens and depth 2 around it. */
    static final String PING_HEAD = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"pad\":";
    static final String PING_TAIL = "}}";

    TestServer small;
    TestServer standard;

    @BeforeAll
    void start(@TempDir Path smallWorkspace, @TempDir Path standardWorkspace) throws Exception {
        small = TestServer.start(smallWorkspace, Map.of("MCP_MAX_REQUEST_BYTES", Integer.toString(MAX_BYTES)));
        standard = TestServer.start(standardWorkspace);
    }

    @AfterAll
    void stop() {
        small.close();
        standard.close();
    }

    RawHttp.Response post(TestServer server, String body) throws Exception {
        return RawHttp.post(server.port(), "/mcp-sandbox/mcp", AUTH + JSON, body);
    }

    static void assertAnswered(String what, RawHttp.Response response) {
        assertThat(response.status()).as("%s: %s", what, response.body()).isEqualTo(200);
        assertThat(response.body()).as(what).contains("\"id\":7").contains("\"result\"").doesNotContain("\"error\"");
    }

    static void assertRefused(String what, RawHttp.Response response, int status, String... naming) {
        assertThat(response.status()).as("%s: %s", what, response.body()).isEqualTo(status);
        assertThat(response.body()).as(what).startsWith("{\"jsonrpc\":\"2.0\"").contains("\"error\":{\"code\":-326")
                .doesNotContain("Exception").doesNotContain("tools.jackson").contains(naming);
    }

    /** A ping padded with a string to exactly {@code bytes} bytes. */
    static String pingOfSize(int bytes) {
        int pad = bytes - PING_HEAD.length() - PING_TAIL.length() - 2;
        return PING_HEAD + "\"" + "x".repeat(pad) + "\"" + PING_TAIL;
    }

    /** A ping with exactly {@code tokens} JSON tokens. */
    static String pingOfTokens(int tokens) {
        StringBuilder pad = new StringBuilder("[");
        for (int i = 0; i < tokens - 14; i++) {
            pad.append(i == 0 ? "0" : ",0");
        }
        return PING_HEAD + pad.append("]") + PING_TAIL;
    }

    /** A ping nested exactly {@code depth} levels deep (the envelope and params are two). */
    static String pingOfDepth(int depth) {
        return PING_HEAD + "[".repeat(depth - 2) + "]".repeat(depth - 2) + PING_TAIL;
    }

    @Test
    void sizeLimitAtTheEdge() throws Exception {
        assertThat(pingOfSize(MAX_BYTES).getBytes(StandardCharsets.UTF_8)).hasSize(MAX_BYTES);
        assertAnswered("a body of exactly the limit", post(small, pingOfSize(MAX_BYTES)));
        assertRefused("a body one byte past the limit", post(small, pingOfSize(MAX_BYTES + 1)), 413,
                "larger than the limit of " + MAX_BYTES + " bytes", "MCP_MAX_REQUEST_BYTES");
    }

    @Test
    void chunkedBodyPastTheLimitNamesIt() throws Exception {
        byte[] body = pingOfSize(MAX_BYTES + 1).getBytes(StandardCharsets.UTF_8);
        StringBuilder chunked = new StringBuilder();
        for (int at = 0; at < body.length; at += 4096) {
            int n = Math.min(4096, body.length - at);
            chunked.append(Integer.toHexString(n)).append("\r\n")
                    .append(new String(body, at, n, StandardCharsets.ISO_8859_1)).append("\r\n");
        }
        chunked.append("0\r\n\r\n");
        String head = "POST /mcp-sandbox/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                + "Transfer-Encoding: chunked\r\n" + AUTH + JSON + "\r\n";
        assertRefused("a chunked body one byte past the limit",
                RawHttp.send(small.port(), head, chunked.toString().getBytes(StandardCharsets.ISO_8859_1)), 413,
                "larger than the limit of " + MAX_BYTES + " bytes");
    }

    @Test
    void tokenLimitAtTheEdge() throws Exception {
        assertThat(BOUNDS.maxTokens()).isEqualTo(1024);
        assertAnswered("exactly the token limit", post(small, pingOfTokens(BOUNDS.maxTokens())));
        assertRefused("one token past the limit", post(small, pingOfTokens(BOUNDS.maxTokens() + 1)), 400,
                "more JSON values than the limit of 1024 tokens");
    }

    @Test
    void depthLimitAtTheEdge() throws Exception {
        assertAnswered("exactly the depth limit", post(small, pingOfDepth(JsonBounds.MAX_DEPTH)));
        assertRefused("one level past the limit", post(small, pingOfDepth(JsonBounds.MAX_DEPTH + 1)), 400,
                "deeper than the limit of 64 levels");
    }

    @Test
    void stringLimitIsTheSizeLimit() throws Exception {
        // A string cannot pass the size limit without the body passing it first: the body's 413 names it.
        assertRefused("a string past the limit", post(small, pingOfSize(MAX_BYTES + 100)), 413, "MCP_MAX_REQUEST_BYTES");
    }

    @Test
    void twentyMebibyteBodyGetsAnErrorNamingTheSizeLimit() throws Exception {
        int size = 20 * 1024 * 1024;
        byte[] head = PING_HEAD.concat("\"").getBytes(StandardCharsets.UTF_8);
        // Streamed, not held: the client sends it whole, as a client that ignores the early answer would.
        HttpRequest request = HttpRequest.newBuilder(URI.create(standard.url("/mcp-sandbox/mcp")))
                .expectContinue(true)
                .header("Authorization", "Bearer " + TestServer.TOKEN)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(() ->
                        new SequenceInputStream(new ByteArrayInputStream(head), padding(size - head.length))), size))
                .build();
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(413);
            assertThat(response.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                    + "\"the request body is larger than the limit of 8388608 bytes (MCP_MAX_REQUEST_BYTES)\"}}");
        }
        assertAnswered("a ping after it", post(standard, pingOfSize(1000)));
    }

    static InputStream padding(long bytes) {
        return new InputStream() {
            long left = bytes;

            @Override
            public int read() {
                return left-- > 0 ? 'x' : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(len, left);
                java.util.Arrays.fill(b, off, off + n, (byte) 'x');
                left -= n;
                return n;
            }
        };
    }

    @Test
    void refusalsBeforeTheBodyShareTheOneShape() throws Exception {
        RawHttp.Response noToken = RawHttp.post(small.port(), "/mcp-sandbox/mcp", JSON, pingOfSize(200));
        assertRefused("no token", noToken, 401, "Authorization: Bearer <token>");
        RawHttp.Response origin = RawHttp.post(small.port(), "/mcp-sandbox/mcp", AUTH + JSON + "Origin: http://evil.test\r\n",
                pingOfSize(200));
        assertRefused("a foreign origin", origin, 403, "MCP_ALLOWED_ORIGINS");
        RawHttp.Response media = RawHttp.post(small.port(), "/mcp-sandbox/mcp",
                AUTH + "Content-Type: text/plain\r\nAccept: application/json, text/event-stream\r\n", pingOfSize(200));
        assertRefused("a wrong content type", media, 415, "Content-Type");
    }

    /** A message with {@code value} (JSON text) where {@code template}'s {@code VALUE} stands. */
    RawHttp.Response posted(String template, String value) throws Exception {
        return post(standard, template.replace("VALUE", value));
    }

    static String quoted(String text) {
        return "\"" + text + "\"";
    }

    /** Not refused by the envelope check: the SDK's answer (a result, or its own error), or the 202 of a notification. */
    static void assertPassedTheEnvelope(String what, RawHttp.Response response) {
        assertThat(response.status()).as("%s: %s", what, response.body()).isIn(200, 202);
        assertThat(response.body()).as(what).doesNotContain("longer than the limit");
    }

    @Test
    void envelopeStringsAtTheirBounds() throws Exception {
        int longestTool = ToolCatalog.definitions(Limits.defaults()).longestName();
        assertThat(BOUNDS.maxToolNameChars()).isEqualTo(longestTool).isEqualTo("list_directory".length());
        record Bounded(String what, String template, int limit, int status, String naming) {
        }
        String call = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"list_jobs\","
                + "\"arguments\":{},\"_meta\":{\"progressToken\":VALUE}}}";
        List<Bounded> bounded = List.of(
                new Bounded("method", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":VALUE}", JsonBounds.MAX_METHOD_CHARS, 400,
                        "\\\"method\\\" is longer than the limit of 128 characters"),
                new Bounded("a notification's method", "{\"jsonrpc\":\"2.0\",\"method\":VALUE}", JsonBounds.MAX_METHOD_CHARS, 400,
                        "\\\"method\\\" is longer than the limit of 128 characters"),
                new Bounded("id", "{\"jsonrpc\":\"2.0\",\"id\":VALUE,\"method\":\"ping\"}", JsonBounds.MAX_ID_CHARS, 400,
                        "\\\"id\\\" is longer than the limit of 256 characters"),
                new Bounded("requestId", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":VALUE}}",
                        JsonBounds.MAX_ID_CHARS, 400, "params.requestId is longer than the limit of 256 characters"),
                new Bounded("tool name", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":VALUE}}",
                        longestTool, 400, "params.name of tools/call is longer than the limit of " + longestTool + " characters"),
                new Bounded("progressToken", call, JsonBounds.MAX_PROGRESS_TOKEN_CHARS, 400,
                        "params._meta.progressToken is longer than the limit of 256 characters"));
        for (Bounded b : bounded) {
            // At the limit: the SDK's to answer (an unknown method or tool is its error, not the envelope's).
            assertPassedTheEnvelope(b.what() + " at the limit", posted(b.template(), quoted("\u0101" + "m".repeat(b.limit() - 1))));
            // One past it, and far past it (past what the check reads at all: refused before it is whole).
            for (int length : new int[] {b.limit() + 1, JsonBounds.MAX_KEPT_CHARS + 1, 100_000}) {
                RawHttp.Response refused = posted(b.template(), quoted("\u0101" + "m".repeat(length - 1)));
                assertRefused(b.what() + " of " + length, refused, b.status(), b.naming());
                assertThat(refused.body()).as(b.what()).doesNotContain("mmmmmmmm").hasSizeLessThan(400);
                if (b.template().contains("\"id\":7")) {
                    assertThat(refused.body()).as(b.what() + ": the id is answered").contains("\"id\":7");
                }
            }
        }
        // A number's digits count as an id's characters (one past a long's the SDK refuses itself); a refused id is not echoed.
        RawHttp.Response longNumber = posted(bounded.get(2).template(), "9".repeat(JsonBounds.MAX_ID_CHARS + 1));
        assertRefused("a number id past the limit", longNumber, 400, "limit of 256 characters");
        assertThat(longNumber.body()).contains("\"id\":null");
        assertThat(posted(bounded.get(2).template(), quoted("i".repeat(300))).body()).contains("\"id\":null");
    }
}

package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request whose length or line endings two HTTP implementations could read differently (the
 * raw material of request smuggling through a proxy) is refused with 400 or a closed connection,
 * and never runs. Each request here is a tool call that would leave a marker file behind.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RequestFramingTest {

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    static String touch(String marker) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                + "\"arguments\":{\"command\":\"touch " + marker + "\"}}}";
    }

    static String chunked(String body) {
        return Integer.toHexString(body.length()) + "\r\n" + body + "\r\n0\r\n\r\n";
    }

    String head(String eol, String framing) {
        return "POST " + TestServer.BASE + "/mcp HTTP/1.1" + eol + "Host: localhost" + eol
                + "Authorization: Bearer " + TestServer.TOKEN + eol + "Content-Type: application/json" + eol
                + "Accept: application/json, text/event-stream" + eol + "Connection: close" + eol + framing + eol;
    }

    /** The answer, or null when the server closed the connection without one. */
    RawHttp.Response answerTo(String request) throws IOException {
        try {
            return RawHttp.send(server.port(), request, null);
        } catch (IOException closedWithoutAnswer) {
            if (closedWithoutAnswer.getMessage() != null && closedWithoutAnswer.getMessage().startsWith("not an HTTP response: ")
                    && closedWithoutAnswer.getMessage().length() == "not an HTTP response: ".length()) {
                return null;
            }
            throw closedWithoutAnswer;
        }
    }

    /** The status of the answer, or 0 when the server closed the connection without one. */
    int statusOf(String request) throws IOException {
        RawHttp.Response answer = answerTo(request);
        return answer == null ? 0 : answer.status();
    }

    /**
     * The answer to a request sent on a connection left open until it comes: {@link #answerTo}
     * shuts its side down once the request is sent, which the server takes for a client gone, and
     * a command that had not ended by then was cancelled ("the client closed the request").
     */
    RawHttp.Response answerKeepingTheConnection(String request) throws IOException {
        try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
            return connection.exchange(request, null);
        }
    }

    /** The call was read and its command ran. */
    static void assertRan(RawHttp.Response answer) {
        assertThat(answer).isNotNull();
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).contains("\"exit_code\":0");
    }

    /** A refusal Jetty's parser makes is in the JSON-RPC shape of every other, naming what it refused. */
    static void assertProblem(RawHttp.Response answer, String names) {
        assertThat(answer.head()).as(answer.head()).containsIgnoringCase("Content-Type: application/json");
        assertThat(answer.body()).as(answer.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,")
                .contains(names).contains("the HTTP parser said: ").doesNotContain("<html").doesNotContain("Exception");
    }

    @Test
    void aRefusalThatNoParserMadeIsNotWordedAsTheParsers() throws Exception {
        // The SSE servlet answers POST with sendError(404): well-formed HTTP, refused past the parser.
        RawHttp.Response answer = answerTo("POST " + TestServer.BASE + "/sse HTTP/1.1\r\nHost: localhost\r\n"
                + "Authorization: Bearer " + TestServer.TOKEN + "\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
        assertThat(answer.status()).as(answer.head()).isEqualTo(404);
        assertThat(answer.body()).as(answer.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,")
                .contains("Not Found (404)").doesNotContain("parser");
    }

    @Test
    void ambiguousFramingIsRefusedAndNeverRuns() throws Exception {
        Map<String, String> cases = new LinkedHashMap<>();
        String body = touch("identity-chunked");
        cases.put("identity-chunked", head("\r\n", "Transfer-Encoding: identity, chunked\r\n") + chunked(body));
        body = touch("two-transfer-encodings");
        cases.put("two-transfer-encodings",
                head("\r\n", "Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n") + chunked(body));
        body = touch("chunked-not-last");
        cases.put("chunked-not-last", head("\r\n", "Transfer-Encoding: chunked, identity\r\n") + chunked(body));
        body = touch("gzip-chunked");
        cases.put("gzip-chunked", head("\r\n", "Transfer-Encoding: gzip, chunked\r\n") + chunked(body));
        body = touch("te-and-length");
        cases.put("te-and-length", head("\r\n", "Transfer-Encoding: chunked\r\nContent-Length: " + body.length() + "\r\n")
                + chunked(body));
        body = touch("length-and-te");
        cases.put("length-and-te", head("\r\n", "Content-Length: " + body.length() + "\r\nTransfer-Encoding: chunked\r\n")
                + chunked(body));
        body = touch("duplicate-length");
        cases.put("duplicate-length", head("\r\n", "Content-Length: " + body.length() + "\r\nContent-Length: "
                + body.length() + "\r\n") + body);
        body = touch("two-lengths");
        cases.put("two-lengths", head("\r\n", "Content-Length: " + body.length() + "\r\nContent-Length: 5\r\n") + body);
        body = touch("length-list");
        cases.put("length-list", head("\r\n", "Content-Length: " + body.length() + ", " + body.length() + "\r\n") + body);
        body = touch("bare-lf");
        cases.put("bare-lf", head("\n", "Content-Length: " + body.length() + "\n") + body);
        body = touch("bare-lf-request-line");
        cases.put("bare-lf-request-line", head("\r\n", "Content-Length: " + body.length() + "\r\n")
                .replaceFirst("HTTP/1.1\r\n", "HTTP/1.1\n") + body);
        body = touch("bare-lf-one-header");
        cases.put("bare-lf-one-header", head("\r\n", "X-Padding: a\nContent-Length: " + body.length() + "\r\n") + body);
        body = touch("bare-lf-end-of-head");
        cases.put("bare-lf-end-of-head", head("\r\n", "Content-Length: " + body.length() + "\r\n")
                .replaceFirst("\r\n\r\n$", "\r\n\n") + body);
        body = touch("bare-lf-in-chunk");
        cases.put("bare-lf-in-chunk", head("\r\n", "Transfer-Encoding: chunked\r\n")
                + Integer.toHexString(body.length()) + "\n" + body + "\n0\n\n");
        body = touch("space-before-colon");
        cases.put("space-before-colon", head("\r\n", "Content-Length : " + body.length() + "\r\n") + body);
        body = touch("folded-header");
        cases.put("folded-header", head("\r\n", "X-Folded: a\r\n b\r\nContent-Length: " + body.length() + "\r\n") + body);

        Map<String, Integer> accepted = new LinkedHashMap<>();
        for (var entry : cases.entrySet()) {
            RawHttp.Response answer = answerTo(entry.getValue());
            int status = answer == null ? 0 : answer.status();
            if (status != 0 && status != 400) {
                accepted.put(entry.getKey(), status);
            }
            if (status == 400) {
                assertProblem(answer, "not one well-formed HTTP/1.1 request");
            }
        }
        assertThat(accepted).as("ambiguous requests answered other than with 400 or a close").isEmpty();
        RawHttp.Response ran = RawHttp.post(server.port(), TestServer.BASE + "/mcp", "Authorization: Bearer " + TestServer.TOKEN
                + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", touch("done"));
        assertThat(ran.status()).isEqualTo(200);
        for (String marker : cases.keySet()) {
            assertThat(Files.exists(server.workspace.resolve(marker))).as("%s ran", marker).isFalse();
        }
    }

    @Test
    void headersPastTheLimitAndGarbageAreRefusedInTheSameShape() throws Exception {
        RawHttp.Response large = answerTo(head("\r\n", "X-Padding: " + "a".repeat(9000) + "\r\nContent-Length: 0\r\n"));
        assertThat(large.status()).isEqualTo(431);
        assertProblem(large, "larger than the limit of 8192 bytes");
        RawHttp.Response garbage = answerTo("PUT /\u0001 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
        assertThat(garbage.status()).isEqualTo(400);
        assertProblem(garbage, "not one well-formed HTTP/1.1 request");
    }

    @Test
    void unknownPathsAndMethodsAreRefusedInTheSameShape() throws Exception {
        String auth = "Authorization: Bearer " + TestServer.TOKEN + "\r\n";
        RawHttp.Response unknownPath = answerTo("GET " + TestServer.BASE + "/nope HTTP/1.1\r\nHost: x\r\n" + auth
                + "Connection: close\r\n\r\n");
        assertThat(unknownPath.status()).isEqualTo(404);
        assertThat(unknownPath.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{").contains("/nope")
                .contains(TestServer.BASE + "/mcp");
        RawHttp.Response wrongMethod = answerTo("DELETE " + TestServer.BASE + "/healthz HTTP/1.1\r\nHost: x\r\n" + auth
                + "Connection: close\r\n\r\n");
        assertThat(wrongMethod.status()).isIn(404, 405);
        assertThat(wrongMethod.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{");
    }

    @Test
    void plainChunkedAndPlainLengthStillWork() throws Exception {
        String body = touch("chunked-ran");
        assertRan(answerKeepingTheConnection(head("\r\n", "Transfer-Encoding: chunked\r\n") + chunked(body)));
        body = touch("upper-case-chunked-ran");
        assertRan(answerKeepingTheConnection(head("\r\n", "Transfer-Encoding: Chunked\r\n") + chunked(body)));
        body = touch("length-ran");
        assertRan(answerKeepingTheConnection(head("\r\n", "Content-Length: " + body.length() + "\r\n") + body));
        assertThat(server.workspace.resolve("chunked-ran")).exists();
        assertThat(server.workspace.resolve("upper-case-chunked-ran")).exists();
        assertThat(server.workspace.resolve("length-ran")).exists();
    }
}

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

    /** The status of the answer, or 0 when the server closed the connection without one. */
    int statusOf(String request) throws IOException {
        try {
            return RawHttp.send(server.port(), request, null).status();
        } catch (IOException closedWithoutAnswer) {
            if (closedWithoutAnswer.getMessage() != null && closedWithoutAnswer.getMessage().startsWith("not an HTTP response: ")
                    && closedWithoutAnswer.getMessage().length() == "not an HTTP response: ".length()) {
                return 0;
            }
            throw closedWithoutAnswer;
        }
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
            int status = statusOf(entry.getValue());
            if (status != 0 && status != 400) {
                accepted.put(entry.getKey(), status);
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
    void plainChunkedAndPlainLengthStillWork() throws Exception {
        String body = touch("chunked-ran");
        assertThat(statusOf(head("\r\n", "Transfer-Encoding: chunked\r\n") + chunked(body))).isEqualTo(200);
        body = touch("upper-case-chunked-ran");
        assertThat(statusOf(head("\r\n", "Transfer-Encoding: Chunked\r\n") + chunked(body))).isEqualTo(200);
        body = touch("length-ran");
        assertThat(statusOf(head("\r\n", "Content-Length: " + body.length() + "\r\n") + body)).isEqualTo(200);
        assertThat(server.workspace.resolve("chunked-ran")).exists();
        assertThat(server.workspace.resolve("upper-case-chunked-ran")).exists();
        assertThat(server.workspace.resolve("length-ran")).exists();
    }
}

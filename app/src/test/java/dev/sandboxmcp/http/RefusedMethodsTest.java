package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * TRACE would echo the request back, token included, to whatever script can make the client send
 * one; OPTIONS advertised TRACE. Neither is needed (the server answers no CORS preflight: a
 * browser page's Origin is refused unless allowed, and then it sends POST), so both are refused
 * on every path with 405 in the JSON-RPC shape of every other refusal, echoing nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RefusedMethodsTest {

    private static final List<String> PATHS = List.of(TestServer.BASE + "/mcp", TestServer.BASE + "/sse",
            TestServer.BASE + "/message?sessionId=x", "/healthz", TestServer.BASE + "/healthz", "/", "/nowhere");

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    private RawHttp.Response send(String method, String target) throws Exception {
        return RawHttp.send(server.port(), method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n"
                + "Authorization: Bearer " + TestServer.TOKEN + "\r\nX-Echo-Canary: canary-7f3a\r\n"
                + "Connection: close\r\n\r\n", null);
    }

    @Test
    void traceAndOptionsAreRefusedEverywhereWithoutEchoingTheRequest() throws Exception {
        for (String method : List.of("TRACE", "OPTIONS")) {
            for (String path : PATHS) {
                RawHttp.Response answer = send(method, path);
                String whole = answer.head() + answer.body();
                assertThat(answer.status()).as(method + " " + path + ":\n" + whole).isEqualTo(405);
                assertThat(answer.head()).as(whole).containsIgnoringCase("Content-Type: application/json")
                        .doesNotContainIgnoringCase("TRACE");
                assertThat(answer.body()).as(whole)
                        .startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,")
                        .contains(method + " is not answered");
                assertThat(whole).as(whole).doesNotContain(TestServer.TOKEN).doesNotContain("canary-7f3a")
                        .doesNotContain("message/http");
            }
        }
    }

    /**
     * A HEAD of the SSE endpoint opened a session (the servlet's HEAD is its GET with the body
     * dropped) whose keep-alives went nowhere, so it never failed and never ended: its connection
     * was held for good. HEAD is refused on every path, the health probes' too, with no body.
     */
    @Test
    void headIsRefusedEverywhere() throws Exception {
        for (String path : PATHS) {
            RawHttp.Response answer = send("HEAD", path);
            assertThat(answer.status()).as("HEAD " + path + ":\n" + answer.head()).isEqualTo(405);
            assertThat(answer.head()).containsIgnoringCase("Allow: GET, POST");
            assertThat(answer.body()).isEmpty();
        }
    }

    @Test
    void optionsOfTheWholeServerIsRefusedToo() throws Exception {
        RawHttp.Response answer = send("OPTIONS", "*");
        String whole = answer.head() + answer.body();
        assertThat(answer.status()).as(whole).isEqualTo(405);
        assertThat(answer.body()).as(whole).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,")
                .contains("OPTIONS is not answered");
        assertThat(whole).doesNotContain(TestServer.TOKEN).doesNotContainIgnoringCase("TRACE");
    }
}

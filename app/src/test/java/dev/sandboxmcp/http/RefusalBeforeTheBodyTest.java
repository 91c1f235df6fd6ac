package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request refused before its body was read leaves that body unread on the connection, so the
 * server must close the connection; it says so in the refusal ({@code Connection: close}). A
 * reverse proxy that keeps its connections to the server (Traefik does) otherwise puts the
 * connection back in its pool, sends the next client's request on it as it closes, and answers
 * that client 502. A refusal whose body had arrived keeps the connection, as any answer does.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RefusalBeforeTheBodyTest {

    static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    static final String MCP = "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n";

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    String head(String headers, long contentLength) {
        return "POST " + TestServer.BASE + "/mcp HTTP/1.1\r\nHost: 127.0.0.1:" + server.port() + "\r\n" + MCP + headers
                + "Content-Length: " + contentLength + "\r\n\r\n";
    }

    /** Each refusal a filter makes before it reads the body, by its status and the headers that earn it. */
    Map<String, String> refusals() {
        String bearer = "Authorization: Bearer " + TestServer.TOKEN + "\r\n";
        Map<String, String> refusals = new LinkedHashMap<>();
        refusals.put("401 no token", "");
        refusals.put("401 wrong token", "Authorization: Bearer wrong-" + TestServer.TOKEN + "\r\n");
        refusals.put("403 foreign origin", bearer + "Origin: https://evil.example\r\n");
        return refusals;
    }

    @Test
    void aRefusalSentBeforeTheBodyArrivedSaysTheConnectionCloses() throws Exception {
        for (var refusal : refusals().entrySet()) {
            try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
                RawHttp.Response answer = connection.exchange(head(refusal.getValue(), PING.length()), null);
                assertThat(answer.status()).as(refusal.getKey()).isEqualTo(Integer.parseInt(refusal.getKey().substring(0, 3)));
                assertThat(answer.head()).as(refusal.getKey() + "\n" + answer.head()).containsIgnoringCase("\r\nConnection: close");
                assertThat(connection.closedWithin(5_000)).as(refusal.getKey() + ": closed as it said").isTrue();
            }
        }
    }

    @Test
    void aBodyOverTheLimitIsReadToTheLimitAndItsRefusalSaysTheConnectionCloses() throws Exception {
        int over = 9 * 1024 * 1024;
        String bearer = "Authorization: Bearer " + TestServer.TOKEN + "\r\n";
        try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
            Thread sender = Thread.ofVirtual().start(() -> connection.write(head(bearer, over) + "x".repeat(over)));
            RawHttp.Response answer = connection.readResponse();
            assertThat(answer.status()).isEqualTo(413);
            assertThat(answer.head()).as(answer.head()).containsIgnoringCase("\r\nConnection: close");
            assertThat(connection.closedWithin(5_000)).isTrue();
            sender.join();
        }
    }

    @Test
    void aRefusalWhoseBodyHadArrivedKeepsTheConnection() throws Exception {
        for (var refusal : refusals().entrySet()) {
            try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
                for (int i = 0; i < 3; i++) {
                    // head and body in one write, so the body is there when the refusal is made
                    RawHttp.Response answer = connection.exchange(head(refusal.getValue(), PING.length()) + PING, null);
                    assertThat(answer).as(refusal.getKey() + " #" + i).isNotNull();
                    assertThat(answer.head()).as(refusal.getKey() + "\n" + answer.head()).doesNotContainIgnoringCase("Connection: close");
                }
            }
        }
    }
}

package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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

    record Refusal(String name, int status, String path, String headers) {
    }

    String head(Refusal refusal, long contentLength) {
        return "POST " + refusal.path() + " HTTP/1.1\r\nHost: 127.0.0.1:" + server.port() + "\r\n" + MCP
                + refusal.headers() + "Content-Length: " + contentLength + "\r\n\r\n";
    }

    static final String MCP_PATH = TestServer.BASE + "/mcp";
    static final String BEARER = "Authorization: Bearer " + TestServer.TOKEN + "\r\n";

    /** The refusals the filters make before they read the body: each keeps a connection whose body had arrived. */
    static List<Refusal> filterRefusals() {
        return List.of(
                new Refusal("no token", 401, MCP_PATH, ""),
                new Refusal("wrong token", 401, MCP_PATH, "Authorization: Bearer wrong-" + TestServer.TOKEN + "\r\n"),
                new Refusal("foreign origin", 403, MCP_PATH, BEARER + "Origin: https://evil.example\r\n"));
    }

    /** Every refusal made before the body is read: the filters' and Javalin's own (no such endpoint). */
    static List<Refusal> everyEarlyRefusal() {
        List<Refusal> all = new ArrayList<>(filterRefusals());
        all.add(new Refusal("no such endpoint", 404, MCP_PATH + "/nothing", BEARER));
        all.add(new Refusal("no such endpoint outside the base path", 404, "/nothing", BEARER));
        all.add(new Refusal("POST to the health probe", 404, TestServer.BASE + "/healthz", ""));
        return all;
    }

    @Test
    void aRefusalSentBeforeTheBodyArrivedSaysTheConnectionCloses() throws Exception {
        for (Refusal refusal : everyEarlyRefusal()) {
            try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
                RawHttp.Response answer = connection.exchange(head(refusal, PING.length()), null);
                assertThat(answer.status()).as(refusal.name()).isEqualTo(refusal.status());
                assertThat(answer.head()).as(refusal.name() + "\n" + answer.head()).containsIgnoringCase("\r\nConnection: close");
                assertThat(connection.closedWithin(5_000)).as(refusal.name() + ": closed as it said").isTrue();
            }
        }
    }

    @Test
    void aBodyOverTheLimitIsReadToTheLimitAndItsRefusalSaysTheConnectionCloses() throws Exception {
        int over = 9 * 1024 * 1024;
        Refusal tooLarge = new Refusal("too large", 413, MCP_PATH, BEARER);
        try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
            Thread sender = Thread.ofVirtual().start(() -> connection.write(head(tooLarge, over) + "x".repeat(over)));
            RawHttp.Response answer = connection.readResponse();
            assertThat(answer.status()).isEqualTo(413);
            assertThat(answer.head()).as(answer.head()).containsIgnoringCase("\r\nConnection: close");
            assertThat(connection.closedWithin(5_000)).isTrue();
            sender.join();
        }
    }

    @Test
    void aFiltersRefusalWhoseBodyHadArrivedKeepsTheConnection() throws Exception {
        for (Refusal refusal : filterRefusals()) {
            try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
                for (int i = 0; i < 3; i++) {
                    // head and body in one write, so the body is there when the refusal is made
                    RawHttp.Response answer = connection.exchange(head(refusal, PING.length()) + PING, null);
                    assertThat(answer).as(refusal.name() + " #" + i).isNotNull();
                    assertThat(answer.status()).as(refusal.name() + " #" + i).isEqualTo(refusal.status());
                    assertThat(answer.head()).as(refusal.name() + "\n" + answer.head()).doesNotContainIgnoringCase("Connection: close");
                }
            }
        }
    }
}

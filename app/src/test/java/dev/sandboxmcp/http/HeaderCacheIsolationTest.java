package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one request on a keep-alive connection sends can never change what a later request on
 * the same connection is seen to send. An HTTP parser that remembers header lines per connection
 * and matches them ignoring case once let an anonymous request lock the real client out:
 * after {@code authorization: bearer}, every later {@code Authorization: Bearer <token>} on the
 * connection arrived as {@code bearer <token>} and was refused. Behind a reverse proxy that pools
 * its connections to the server, the attacker and the client share those connections.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HeaderCacheIsolationTest {

    static final String ORIGIN = "https://allowed.example";
    static final String TOOLS_LIST = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace, Map.of("MCP_ALLOWED_ORIGINS", ORIGIN));
    }

    @AfterAll
    void stop() {
        server.close();
    }

    /** The headers of the victim's valid, authenticated MCP request, each spelled as a real client does. */
    Map<String, String> victimHeaders(int port) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Host", "localhost:" + port);
        headers.put("Authorization", "Bearer " + TestServer.TOKEN);
        headers.put("Accept", "application/json, text/event-stream");
        headers.put("Content-Type", "application/json");
        headers.put("Origin", ORIGIN);
        headers.put("Mcp-Protocol-Version", "2025-06-18");
        headers.put("Mcp-Session-Id", "victim-session");
        headers.put("User-Agent", "victim-client/1.0 (MCP)");
        headers.put("Cookie", "session=Victim");
        headers.put("X-Forwarded-For", "203.0.113.7");
        headers.put("Accept-Encoding", "gzip, deflate");
        headers.put("Cache-Control", "no-cache");
        return headers;
    }

    String victimRequest(int port) {
        StringBuilder head = new StringBuilder("POST " + TestServer.BASE + "/mcp HTTP/1.1\r\n");
        victimHeaders(port).forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
        return head.append("Content-Length: ").append(TOOLS_LIST.length()).append("\r\n\r\n").append(TOOLS_LIST).toString();
    }

    static final Map<String, UnaryOperator<String>> CASINGS = Map.of(
            "lower", s -> s.toLowerCase(Locale.ROOT),
            "upper", s -> s.toUpperCase(Locale.ROOT),
            "mixed", HeaderCacheIsolationTest::alternateCase);

    static String alternateCase(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            out.append(i % 2 == 0 ? Character.toUpperCase(c) : Character.toLowerCase(c));
        }
        return out.toString();
    }

    /** An attacker's request: the padding (to evict whatever the connection remembered), then the bait. */
    static String attackerRequest(String path, String padding, String name, String value) {
        String method = path.endsWith("/mcp") ? "POST" : "GET";
        String body = method.equals("POST") ? TOOLS_LIST : "";
        String host = name.equalsIgnoreCase("Host") ? "" : "Host: localhost\r\n";
        return method + " " + path + " HTTP/1.1\r\n" + host + padding + name + ": " + value + "\r\n"
                + (body.isEmpty() ? "" : "Content-Length: " + body.length() + "\r\n") + "\r\n" + body;
    }

    record Attack(String description, String request) {
    }

    /** Every header the server or its transports care about and some they do not, in every casing, with and without padding. */
    List<Attack> attacks(int port) {
        List<String> paddings = List.of("",
                "Cookie: pad=" + "c".repeat(1000) + "\r\n",
                "User-Agent: pad/" + "u".repeat(1000) + "\r\n");
        List<Attack> attacks = new ArrayList<>();
        int n = 0;
        for (var header : victimHeaders(port).entrySet()) {
            String value = header.getValue();
            int cut = value.indexOf(' ');
            List<String> baits = cut > 0 ? List.of(value, value.substring(0, cut).replace(",", "")) : List.of(value);
            for (var nameCasing : CASINGS.entrySet()) {
                for (var valueCasing : CASINGS.entrySet()) {
                    for (String bait : baits) {
                        for (String padding : paddings) {
                            String path = n++ % 2 == 0 ? "/healthz" : TestServer.BASE + "/mcp";
                            String name = nameCasing.getValue().apply(header.getKey());
                            String sent = valueCasing.getValue().apply(bait);
                            attacks.add(new Attack("%s: %s to %s%s".formatted(name, sent, path,
                                    padding.isEmpty() ? "" : " after " + padding.substring(0, padding.indexOf(':')) + " padding"),
                                    attackerRequest(path, padding, name, sent)));
                        }
                    }
                }
            }
        }
        return attacks;
    }

    @Test
    void lowerCaseBearerWithoutTokenDoesNotLockTheNextRequestOut() throws Exception {
        String anyPath = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nauthorization: bearer\r\n\r\n";
        String mcpPath = "POST " + TestServer.BASE + "/mcp HTTP/1.1\r\nHost: localhost\r\nauthorization: bearer\r\n"
                + "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + TOOLS_LIST.length() + "\r\n\r\n" + TOOLS_LIST;
        for (String bait : List.of(anyPath, mcpPath)) {
            try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
                assertThat(connection.exchange(bait, null).status()).isIn(200, 401);
                RawHttp.Response victim = connection.exchange(victimRequest(server.port()), null);
                assertThat(victim).as("the connection stays open after %s", bait).isNotNull();
                assertServedOrClosed("authorization: bearer", victim);
            }
        }
    }

    @Test
    void noHeaderSpellingPoisonsALaterRequestOnTheSameConnection() throws Exception {
        List<Attack> attacks = attacks(server.port());
        List<String> poisoned = new ArrayList<>();
        for (Attack attack : attacks) {
            for (boolean inUse : new boolean[] {false, true}) {
                try (RawHttp.Connection connection = RawHttp.Connection.open(server.port())) {
                    if (inUse) {
                        // The victim first, so the connection is one in use, as a proxy's pooled connection is.
                        assertThat(connection.exchange(victimRequest(server.port()), null).status()).isEqualTo(200);
                    }
                    if (connection.exchange(attack.request(), null) == null) {
                        continue; // the server closed the connection: nothing of the attack survives
                    }
                    RawHttp.Response victim = connection.exchange(victimRequest(server.port()), null);
                    if (victim != null && (victim.status() != 200 || !victim.body().contains("\"tools\""))) {
                        poisoned.add(attack.description() + (inUse ? " on a connection in use" : "") + " -> " + victim.status());
                    }
                }
            }
        }
        System.out.printf("header cache: %d attacks, each on a new and on a used connection and followed by a valid "
                + "request; %d poisoned it%n", attacks.size(), poisoned.size());
        assertThat(poisoned).as("attacks after which the valid request failed").isEmpty();
    }

    @Test
    void anAttackerBehindAPoolingProxyCannotLockOutTheClientsBehindIt() throws Exception {
        String victimHeaders = "Authorization: Bearer " + TestServer.TOKEN + "\r\n"
                + "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n";
        List<String> baits = List.of("authorization: bearer\r\n",
                "Cookie: pad=" + "c".repeat(1000) + "\r\nauthorization: bearer\r\n",
                "User-Agent: pad/" + "u".repeat(1000) + "\r\nACCEPT: APPLICATION/JSON\r\n");
        try (PoolingProxy proxy = PoolingProxy.start(server.port())) {
            for (String bait : baits) {
                assertThat(RawHttp.post(proxy.port(), TestServer.BASE + "/mcp", victimHeaders, TOOLS_LIST).status())
                        .as("the victim before the attack").isEqualTo(200);
                RawHttp.send(proxy.port(), "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + bait + "\r\n",
                        null);
                for (int i = 0; i < 3; i++) {
                    RawHttp.Response victim = RawHttp.post(proxy.port(), TestServer.BASE + "/mcp", victimHeaders, TOOLS_LIST);
                    assertThat(victim.status()).as("the victim's request %d after %s", i, bait.strip()).isEqualTo(200);
                    assertThat(victim.body()).contains("\"tools\"");
                }
            }
        }
    }

    static void assertServedOrClosed(String attack, RawHttp.Response victim) {
        if (victim == null) {
            return;
        }
        assertThat(victim.status()).as("the valid request after %s: %s%n%s", attack, victim.head(), victim.body())
                .isEqualTo(200);
        assertThat(victim.body()).as(attack).contains("\"tools\"").doesNotContain("\"error\"");
    }
}

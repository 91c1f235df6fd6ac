package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way of almost sending the token, against the server as its own process: each is refused
 * with 401 (431 for an oversized header), and none of the values sent ends up in the log.
 */
class AuthVariantsTest {

    static final String TOKEN = ServerProcessTest.TOKEN;
    static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"x\",\"version\":\"1\"}}}";
    static final String JSON_HEADERS = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

    @TempDir
    java.nio.file.Path temp;

    @Test
    void everyNearMissIsRefusedAndNothingIsLogged() throws Exception {
        ServerProcessTest harness = new ServerProcessTest();
        harness.temp = temp;
        Map<String, String> variants = new LinkedHashMap<>();
        variants.put("missing", "");
        variants.put("empty", "Authorization: \r\n");
        variants.put("scheme only", "Authorization: Bearer \r\n");
        variants.put("wrong", "Authorization: Bearer wrong-0000000000000000000000000000000000000000\r\n");
        variants.put("one character off", "Authorization: Bearer " + TOKEN.substring(0, TOKEN.length() - 1) + "X\r\n");
        variants.put("prefix of the token", "Authorization: Bearer " + TOKEN.substring(0, 32) + "\r\n");
        variants.put("token plus suffix", "Authorization: Bearer " + TOKEN + "suffix\r\n");
        variants.put("lower-case scheme", "Authorization: bearer " + TOKEN + "\r\n");
        variants.put("no scheme", "Authorization: " + TOKEN + "\r\n");
        variants.put("two spaces", "Authorization: Bearer  " + TOKEN + "\r\n");
        variants.put("two headers", "Authorization: Bearer " + TOKEN + "\r\nAuthorization: Bearer " + TOKEN + "\r\n");
        variants.put("basic", "Authorization: Basic " + TOKEN + "\r\n");
        variants.put("other header", "X-Authorization: Bearer " + TOKEN + "\r\n");

        try (ServerProcessTest.Server server = ServerProcessTest.Server.start(harness, Map.of("MCP_AUTH_TOKEN", TOKEN),
                List.of())) {
            for (var variant : variants.entrySet()) {
                for (String path : List.of("/mcp-sandbox/mcp", "/mcp-sandbox/message?sessionId=abc")) {
                    RawHttp.Response response = RawHttp.post(server.port, path, JSON_HEADERS + variant.getValue(), INITIALIZE);
                    assertThat(response.status()).as("%s on %s", variant.getKey(), path).isEqualTo(401);
                    assertThat(response.head()).contains("WWW-Authenticate: Bearer");
                }
            }
            for (String query : List.of("?access_token=" + TOKEN, "?token=" + TOKEN, "?authorization=Bearer%20" + TOKEN)) {
                RawHttp.Response response = RawHttp.post(server.port, "/mcp-sandbox/mcp" + query, JSON_HEADERS, INITIALIZE);
                assertThat(response.status()).as("token in the query string %s", query).isEqualTo(401);
            }
            String huge = "Authorization: Bearer " + "A".repeat(64 * 1024) + "\r\n";
            assertThat(RawHttp.post(server.port, "/mcp-sandbox/mcp", JSON_HEADERS + huge, INITIALIZE).status()).isEqualTo(431);

            RawHttp.Response ok = RawHttp.post(server.port, "/mcp-sandbox/mcp",
                    JSON_HEADERS + "Authorization: Bearer " + TOKEN + "\r\n", INITIALIZE);
            assertThat(ok.status()).as("the real token still works").isEqualTo(200);
            assertThat(server.health()).isEqualTo(200);

            server.stop();
            String log = server.output();
            assertThat(log).doesNotContain(TOKEN).doesNotContain(TOKEN.substring(0, 32)).doesNotContain("wrong-000000")
                    .doesNotContain("AAAAAAAAAAAAAAAA");
        }
    }
}

package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.TypeRef;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit records the TCP peer always, and as the client the right-most X-Forwarded-For hop
 * that is not a trusted proxy, but only when the peer is a trusted proxy: anyone can write the
 * header, so from anyone else it is ignored.
 */
class ForwardedForTest {

    static final String JSON = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            + "Authorization: Bearer " + TestServer.TOKEN + "\r\n";

    /** Makes one audited tool call with the given extra header lines; returns its audit line. */
    static Map<String, Object> auditedCall(TestServer server, int port, String headers) throws Exception {
        String marker = "call-" + UUID.randomUUID();
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                + "\"arguments\":{\"command\":\"echo " + marker + "\"}}}";
        assertThat(RawHttp.post(port, TestServer.BASE + "/mcp", JSON + headers, body).status()).isEqualTo(200);
        List<Map<String, Object>> lines = new ArrayList<>();
        for (String line : server.auditLog().lines().filter(l -> l.contains(marker)).toList()) {
            lines.add(McpJsonDefaults.getMapper().readValue(line, new TypeRef<Map<String, Object>>() {
            }));
        }
        assertThat(lines).as("its start and its end").hasSize(2);
        assertThat(lines.getFirst()).containsEntry("event", "tool_call_started")
                .containsEntry("client", lines.getLast().get("client")).containsEntry("peer", lines.getLast().get("peer"));
        return lines.getLast();
    }

    static String client(TestServer server, String forwardedFor) throws Exception {
        Map<String, Object> audit = auditedCall(server, server.port(), forwardedFor);
        assertThat(audit).containsEntry("peer", "127.0.0.1");
        return (String) audit.get("client");
    }

    @Test
    void fromATrustedPeerTheClientIsTheRightMostUntrustedHop(@TempDir Path workspace) throws Exception {
        try (TestServer server = TestServer.start(workspace)) { // loopback is trusted by default
            assertThat(client(server, "")).as("no header").isEqualTo("127.0.0.1");
            assertThat(client(server, "X-Forwarded-For: 203.0.113.9\r\n")).isEqualTo("203.0.113.9");
            assertThat(client(server, "X-Forwarded-For: 198.51.100.66, 203.0.113.9\r\n"))
                    .as("a hop the client wrote itself, left of the one the proxy appended").isEqualTo("203.0.113.9");
            assertThat(client(server, "X-Forwarded-For: 198.51.100.66, 203.0.113.9, 127.0.0.1, ::1\r\n"))
                    .as("trusted proxies on the right are skipped").isEqualTo("203.0.113.9");
            assertThat(client(server, "X-Forwarded-For: 198.51.100.66\r\nX-Forwarded-For: 203.0.113.9\r\n"))
                    .as("two header lines are one list").isEqualTo("203.0.113.9");
            assertThat(client(server, "X-Forwarded-For: 127.0.0.7, 127.0.0.1\r\n"))
                    .as("every hop trusted: the left-most").isEqualTo("127.0.0.7");
            assertThat(client(server, "X-Forwarded-For: 203.0.113.9:4711\r\n")).isEqualTo("203.0.113.9");
            assertThat(client(server, "X-Forwarded-For: [2001:db8::7]:4711\r\n")).isEqualTo("2001:db8:0:0:0:0:0:7");
            assertThat(client(server, "X-Forwarded-For: 203.0.113.9, <script>\r\n")).isEqualTo("invalid");
            assertThat(client(server, "X-Forwarded-For: 203.0.113.9, evil.example\r\n"))
                    .as("a name is not looked up").isEqualTo("invalid");
            assertThat(server.auditLog()).doesNotContain("<script>").doesNotContain("evil.example");
        }
    }

    @Test
    void fromAnUntrustedPeerTheHeaderIsIgnored(@TempDir Path workspace) throws Exception {
        try (TestServer server = TestServer.start(workspace, Map.of("MCP_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.1"))) {
            assertThat(client(server, "X-Forwarded-For: 203.0.113.9\r\n")).isEqualTo("127.0.0.1");
            assertThat(client(server, "X-Forwarded-For: 10.1.2.3, 203.0.113.9, 10.0.0.1\r\n")).isEqualTo("127.0.0.1");
        }
        try (TestServer server = TestServer.start(workspace, Map.of("MCP_TRUSTED_PROXIES", "none"))) {
            assertThat(client(server, "X-Forwarded-For: 203.0.113.9\r\n")).isEqualTo("127.0.0.1");
        }
    }

    @Test
    void throughAReverseProxyTheClientIsTheAddressTheProxySaw(@TempDir Path workspace) throws Exception {
        try (TestServer server = TestServer.start(workspace); PoolingProxy proxy = PoolingProxy.start(server.port())) {
            // The proxy appends the address it saw (loopback here) to what the client wrote.
            Map<String, Object> audit = auditedCall(server, proxy.port(), "X-Forwarded-For: 203.0.113.9\r\n");
            assertThat(audit).containsEntry("peer", "127.0.0.1").containsEntry("client", "203.0.113.9");
            audit = auditedCall(server, proxy.port(), "");
            assertThat(audit).containsEntry("peer", "127.0.0.1").containsEntry("client", "127.0.0.1");
        }
    }
}

package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Up to {@code MCP_MAX_CONNECTIONS} connections are served; one past it is answered at once with
 * 503 and {@code Connection: close} and closed, and once a connection goes, a new one is served.
 */
class ConnectionCapTest {

    static final int CAP = 8;
    static final String HEALTH = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";

    @Test
    void connectionPastTheCapIsRefusedClearlyAndServedOnceOneCloses(@TempDir Path workspace) throws Exception {
        try (TestServer server = TestServer.start(workspace, Map.of("MCP_MAX_CONNECTIONS", String.valueOf(CAP)))) {
            List<RawHttp.Connection> held = new ArrayList<>();
            try {
                for (int i = 0; i < CAP; i++) {
                    RawHttp.Connection connection = RawHttp.Connection.open(server.port());
                    held.add(connection);
                    assertThat(connection.exchange(HEALTH, null).status()).as("connection %d of %d", i + 1, CAP).isEqualTo(200);
                }
                for (int i = 0; i < 20; i++) {
                    long started = System.nanoTime();
                    RawHttp.Response refused = RawHttp.send(server.port(),
                            "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", null);
                    assertThat(refused.status()).as("connection %d", CAP + 1).isEqualTo(503);
                    assertThat(refused.head()).contains("Connection: close").contains("Retry-After: 1");
                    assertThat(refused.body()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,")
                            .contains("too many connections").contains("MCP_MAX_CONNECTIONS");
                    assertThat((System.nanoTime() - started) / 1_000_000).as("ms until refused").isLessThan(2_000);
                }
                for (RawHttp.Connection connection : held) {
                    assertThat(connection.exchange(HEALTH, null).status()).as("the held connections are still served")
                            .isEqualTo(200);
                }

                held.removeFirst().close();
                int status = 0;
                for (int attempt = 0; attempt < 50 && status != 200; attempt++) {
                    Thread.sleep(50); // the server notices the close in its own time
                    status = RawHttp.send(server.port(), "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                            null).status();
                }
                assertThat(status).as("a new connection once one of the held ones closed").isEqualTo(200);
            } finally {
                for (RawHttp.Connection connection : held) {
                    connection.close();
                }
            }
        }
    }
}

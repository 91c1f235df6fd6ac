package dev.sandboxmcp;

import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.config.ConfigException;
import dev.sandboxmcp.verify.BearerClients;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpClientTransport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** The real server, started in-process on a free loopback port, and SDK clients for it. */
public final class TestServer implements AutoCloseable {

    public static final String TOKEN = "test-token-0123456789-abcdefghijklmnop-XYZ";
    public static final String BASE = "/mcp-sandbox";

    private final Main.Running running;
    private final ByteArrayOutputStream audit;
    public final Path workspace;

    private TestServer(Main.Running running, ByteArrayOutputStream audit, Path workspace) {
        this.running = running;
        this.audit = audit;
        this.workspace = workspace;
    }

    public static TestServer start(Path workspace) throws IOException, ConfigException {
        return start(workspace, Map.of());
    }

    public static TestServer start(Path workspace, Map<String, String> extraEnv) throws IOException, ConfigException {
        Map<String, String> env = new HashMap<>();
        env.put("MCP_ADDR", "127.0.0.1:0");
        env.put("MCP_BASE_PATH", BASE);
        env.put("MCP_WORKSPACE", workspace.toString());
        env.put("MCP_AUTH_TOKEN", TOKEN);
        env.putAll(extraEnv);
        Config config = Config.fromEnvironment(env);
        ByteArrayOutputStream audit = new ByteArrayOutputStream();
        Map<String, String> commandEnv = new HashMap<>(System.getenv());
        commandEnv.put("MCP_AUTH_TOKEN", TOKEN);
        Main.Running running = Main.start(config, commandEnv, new PrintStream(audit, true, StandardCharsets.UTF_8));
        return new TestServer(running, audit, workspace);
    }

    public int port() {
        return running.server().port();
    }

    public String origin() {
        return "http://127.0.0.1:" + port();
    }

    public String url(String path) {
        return origin() + path;
    }

    public synchronized String auditLog() {
        return audit.toString(StandardCharsets.UTF_8);
    }

    public McpSyncClient streamableClient() {
        return client(BearerClients.streamable(origin(), BASE, TOKEN));
    }

    public McpSyncClient sseClient() {
        return client(BearerClients.sse(origin(), BASE, TOKEN));
    }

    public static McpSyncClient client(McpClientTransport transport) {
        return BearerClients.sync(transport, Duration.ofSeconds(150), Duration.ofSeconds(20));
    }

    @Override
    public void close() {
        running.close();
    }
}

package dev.sandboxmcp.verify;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.customizer.McpSyncHttpClientRequestCustomizer;
import io.modelcontextprotocol.spec.McpClientTransport;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * MCP SDK clients of this server, on either transport, sending the bearer token with every
 * request: the one set-up that {@code verify}, the tests and the benchmark share. A base path is
 * the server's {@code MCP_BASE_PATH} (e.g. {@code /mcp-sandbox}), an origin its scheme, host and port.
 */
public final class BearerClients {

    private static final Consumer<HttpClient.Builder> AS_IS = http -> {
    };

    private BearerClients() {
    }

    /** Streamable HTTP at {@code <origin><basePath>/mcp}. */
    public static McpClientTransport streamable(String origin, String basePath, String token) {
        return streamable(origin, basePath, token, AS_IS);
    }

    /** HTTP+SSE, its event stream at {@code <origin><basePath>/sse}. */
    public static McpClientTransport sse(String origin, String basePath, String token) {
        return sse(origin, basePath, token, AS_IS);
    }

    /** As {@link #streamable(String, String, String)}, with {@code http} adjusting the JDK client (TLS, timeouts). */
    public static McpClientTransport streamable(String origin, String basePath, String token, Consumer<HttpClient.Builder> http) {
        return HttpClientStreamableHttpTransport.builder(origin).customizeClient(http).endpoint(basePath + "/mcp")
                .httpRequestCustomizer(bearer(token)).build();
    }

    /** As {@link #sse(String, String, String)}, with {@code http} adjusting the JDK client (TLS, timeouts). */
    public static McpClientTransport sse(String origin, String basePath, String token, Consumer<HttpClient.Builder> http) {
        return HttpClientSseClientTransport.builder(origin).customizeClient(http).sseEndpoint(basePath + "/sse")
                .httpRequestCustomizer(bearer(token)).build();
    }

    /** A synchronous client over {@code transport}, not yet initialized. */
    public static McpSyncClient sync(McpClientTransport transport, Duration requestTimeout, Duration initializationTimeout) {
        return McpClient.sync(transport).requestTimeout(requestTimeout).initializationTimeout(initializationTimeout).build();
    }

    private static McpSyncHttpClientRequestCustomizer bearer(String token) {
        return (request, method, uri, body, context) -> request.header("Authorization", "Bearer " + token);
    }
}

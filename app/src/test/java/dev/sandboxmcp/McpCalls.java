package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The JSON-RPC messages and the Streamable HTTP requests the process tests send, written once. */
public final class McpCalls {

    private McpCalls() {
    }

    /** A tools/call message; {@code id} and {@code arguments} are JSON text. */
    public static String toolsCall(String id, String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    /** A POST of {@code body} to {@code <base>/mcp} on loopback, with the token and the headers the transport wants. */
    public static HttpRequest post(int port, String token, String body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp-sandbox/mcp"))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .timeout(Duration.ofSeconds(120))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    /** A tools/call of {@code tool} with {@code arguments} (JSON text), answered 200; the response body. */
    public static String callTool(HttpClient http, int port, String token, String tool, String arguments)
            throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(post(port, token, toolsCall("1", tool, arguments)),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }

    /** {@code value} as a JSON string in ASCII: what is not printable ASCII escaped, half a surrogate pair too. */
    public static String jsonString(String value) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                default -> out.append(c < 0x20 || c > 0x7e ? "\\u%04x".formatted((int) c) : String.valueOf(c));
            }
        }
        return out.append('"').toString();
    }
}

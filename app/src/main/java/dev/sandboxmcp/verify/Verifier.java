package dev.sandboxmcp.verify;

import dev.sandboxmcp.tools.ToolCatalog;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.ProtocolVersions;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;

/**
 * The deployment checklist, run from the outside against a base URL such as
 * {@code http://127.0.0.1:18080/mcp-sandbox} or {@code https://node.tailnet.ts.net/mcp-sandbox}:
 * health, both MCP endpoints refusing a missing and a wrong token, the SSE endpoint event
 * keeping the prefix, and on both transports initialize, tools/list and a call of each tool; with
 * {@code egress}, the sandbox's egress mode checked from inside it ({@link EgressCheck}).
 */
public final class Verifier {

    /** The tools this jar declares; the server under test must offer each. */
    static final Set<String> EXPECTED_TOOLS = Set.copyOf(ToolCatalog.names());
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"" + ProtocolVersions.MCP_2025_06_18 + "\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"verify\",\"version\":\"1\"}}}";

    private final URI base;
    private final String basePath;
    private final String origin;
    private final String token;
    private final SSLContext tls;
    private final HttpClient http;
    private final boolean egress;

    public Verifier(URI base, String token, boolean insecure) {
        this(base, token, insecure, false);
    }

    /**
     * @param insecure accept any TLS certificate (for a proxy that serves a self-signed or default
     *                 certificate in a test); never needed against Funnel, whose certificate is real
     * @param egress   also check the sandbox's egress from inside it (meaningful against the
     *                 container deployment only: a runner started by the server on the host has
     *                 the host's network)
     */
    public Verifier(URI base, String token, boolean insecure, boolean egress) {
        this.egress = egress;
        this.tls = insecure ? TrustAll.context() : null;
        this.http = configure(HttpClient.newBuilder()).build();
        String path = base.getRawPath() == null ? "" : base.getRawPath().replaceAll("/+$", "");
        this.basePath = path;
        this.origin = base.getScheme() + "://" + base.getRawAuthority();
        this.base = URI.create(origin + path);
        this.token = token;
    }

    public List<CheckResult> run() {
        List<CheckResult> results = new ArrayList<>();
        results.add(health());
        for (String endpoint : List.of("/mcp", "/sse")) {
            results.add(refuses(endpoint, null, "without token"));
            results.add(refuses(endpoint, "wrong-" + UUID.randomUUID() + UUID.randomUUID(), "with a wrong token"));
        }
        results.add(sseEndpointKeepsPrefix());
        results.addAll(exercise("streamable", () -> BearerClients.streamable(origin, basePath, token, this::configure)));
        results.addAll(exercise("sse", () -> BearerClients.sse(origin, basePath, token, this::configure)));
        return results;
    }

    private HttpClient.Builder configure(HttpClient.Builder builder) {
        builder.connectTimeout(Duration.ofSeconds(10)).followRedirects(HttpClient.Redirect.NEVER);
        if (tls != null) {
            builder.sslContext(tls);
        }
        return builder;
    }

    private CheckResult health() {
        String name = "health " + basePath + "/healthz";
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(base + "/healthz"))
                    .timeout(TIMEOUT).GET().build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200
                    ? CheckResult.pass(name, "200")
                    : CheckResult.fail(name, "status " + response.statusCode() + ", want 200");
        } catch (Exception e) {
            return CheckResult.fail(name, describe(e));
        }
    }

    private CheckResult refuses(String endpoint, String wrongToken, String how) {
        String name = endpoint.substring(1) + " refuses a request " + how;
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + endpoint)).timeout(TIMEOUT)
                .header("Accept", "application/json, text/event-stream");
        if (wrongToken != null) {
            request.header("Authorization", "Bearer " + wrongToken);
        }
        if (endpoint.equals("/mcp")) {
            request.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(INITIALIZE));
        } else {
            request.GET();
        }
        try {
            HttpResponse<Void> response = http.send(request.build(), HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 401
                    ? CheckResult.pass(name, "401")
                    : CheckResult.fail(name, "status " + response.statusCode() + ", want 401");
        } catch (Exception e) {
            return CheckResult.fail(name, describe(e));
        }
    }

    private CheckResult sseEndpointKeepsPrefix() {
        String name = "sse endpoint event keeps " + (basePath.isEmpty() ? "the path" : basePath);
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/sse")).timeout(TIMEOUT)
                .header("Accept", "text/event-stream").header("Authorization", "Bearer " + token).GET().build();
        CompletableFuture<HttpResponse<InputStream>> sent = http.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
        try {
            HttpResponse<InputStream> response = sent.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (response.statusCode() != 200) {
                response.body().close();
                return CheckResult.fail(name, "status " + response.statusCode() + ", want 200");
            }
            CompletableFuture<String> endpoint = CompletableFuture.supplyAsync(() -> firstEndpoint(response.body()));
            try {
                String data = endpoint.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                String expected = basePath + "/message?sessionId=";
                return data != null && data.startsWith(expected)
                        ? CheckResult.pass(name, data.substring(0, expected.length()) + "...")
                        : CheckResult.fail(name, "endpoint event was '" + data + "', want " + expected + "...");
            } finally {
                response.body().close();
            }
        } catch (Exception e) {
            sent.cancel(true);
            return CheckResult.fail(name, describe(e));
        }
    }

    private static String firstEndpoint(InputStream body) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            boolean endpointEvent = false;
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.startsWith("event:")) {
                    endpointEvent = line.substring(6).strip().equals("endpoint");
                } else if (endpointEvent && line.startsWith("data:")) {
                    return line.substring(5).strip();
                }
            }
            return null;
        } catch (Exception e) {
            return null;
        }
    }

    private List<CheckResult> exercise(String transport, Supplier<McpClientTransport> connect) {
        List<CheckResult> results = new ArrayList<>();
        McpSyncClient client;
        try {
            client = BearerClients.sync(connect.get(), TIMEOUT, TIMEOUT);
        } catch (Exception e) {
            results.add(CheckResult.fail(transport + " initialize", describe(e)));
            return results;
        }
        try (client) {
            McpSchema.InitializeResult init = client.initialize();
            results.add(CheckResult.pass(transport + " initialize",
                    init.serverInfo().name() + " " + init.serverInfo().version() + ", protocol " + init.protocolVersion()));
            Set<String> tools = toolNames(client.listTools().tools());
            results.add(tools.containsAll(EXPECTED_TOOLS)
                    ? CheckResult.pass(transport + " tools/list", String.join(", ", tools))
                    : CheckResult.fail(transport + " tools/list", "got " + tools + ", want " + EXPECTED_TOOLS));
            results.addAll(callEachTool(transport, client));
            if (egress && transport.equals("streamable")) {
                results.addAll(EgressCheck.run(client));
            }
        } catch (Exception e) {
            results.add(CheckResult.fail(transport + " session", describe(e)));
        }
        return results;
    }

    private static List<CheckResult> callEachTool(String transport, McpSyncClient client) {
        String file = ".sandbox-mcp-verify-" + UUID.randomUUID() + ".txt";
        String content = "verify " + transport + "\n";
        List<CheckResult> results = new ArrayList<>();
        CallToolResult write = client.callTool(new CallToolRequest("write_file", Map.of("path", file, "content", content)));
        results.add(toolCheck(transport, "write_file", write, !Boolean.TRUE.equals(write.isError()), "wrote " + file));
        CallToolResult read = client.callTool(new CallToolRequest("read_file", Map.of("path", file)));
        boolean readBack = read.structuredContent() instanceof Map<?, ?> m && content.equals(m.get("content"));
        results.add(toolCheck(transport, "read_file", read, readBack, "read it back"));
        CallToolResult edit = client.callTool(new CallToolRequest("edit_file",
                Map.of("path", file, "old_text", "verify", "new_text", "verified")));
        boolean edited = edit.structuredContent() instanceof Map<?, ?> m && Integer.valueOf(1).equals(m.get("replacements"));
        results.add(toolCheck(transport, "edit_file", edit, edited, "replaced 1 occurrence"));
        CallToolResult list = client.callTool(new CallToolRequest("list_directory", Map.of("path", ".", "include_hidden", true)));
        boolean listed = list.structuredContent() instanceof Map<?, ?> m && String.valueOf(m.get("entries")).contains(file);
        results.add(toolCheck(transport, "list_directory", list, listed, "lists the probe file"));
        String editedContent = content.replace("verify", "verified");
        CallToolResult run = client.callTool(new CallToolRequest("run_command",
                Map.of("command", "cat " + file + " && rm " + file)));
        boolean ran = run.structuredContent() instanceof Map<?, ?> m && Integer.valueOf(0).equals(m.get("exit_code"))
                && editedContent.equals(m.get("stdout"));
        results.add(toolCheck(transport, "run_command", run, ran, "cat and rm exited 0"));
        results.addAll(jobChecks(transport, client));
        return results;
    }

    private static List<CheckResult> jobChecks(String transport, McpSyncClient client) {
        List<CheckResult> results = new ArrayList<>();
        CallToolResult start = client.callTool(new CallToolRequest("start_job", Map.of("command", "echo job-ok")));
        Object id = start.structuredContent() instanceof Map<?, ?> m ? m.get("id") : null;
        results.add(toolCheck(transport, "start_job", start, id instanceof String, "started " + id));
        if (!(id instanceof String)) {
            return results;
        }
        CallToolResult output = null;
        for (int i = 0; i < 200; i++) {
            output = client.callTool(new CallToolRequest("job_output", Map.of("id", id)));
            if (!(output.structuredContent() instanceof Map<?, ?> m) || Boolean.FALSE.equals(m.get("running"))) {
                break;
            }
            sleepQuietly(50);
        }
        boolean done = output.structuredContent() instanceof Map<?, ?> m && "job-ok\n".equals(m.get("output"))
                && Integer.valueOf(0).equals(m.get("exit_code"));
        results.add(toolCheck(transport, "job_output", output, done, "finished with its output"));
        CallToolResult list = client.callTool(new CallToolRequest("list_jobs", Map.of()));
        results.add(toolCheck(transport, "list_jobs", list, String.valueOf(list.structuredContent()).contains((String) id),
                "lists it"));
        CallToolResult stop = client.callTool(new CallToolRequest("stop_job", Map.of("id", id)));
        results.add(toolCheck(transport, "stop_job", stop, !Boolean.TRUE.equals(stop.isError()), "stopped"));
        return results;
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Set<String> toolNames(List<McpSchema.Tool> tools) {
        Set<String> names = new TreeSet<>();
        tools.forEach(t -> names.add(t.name()));
        return names;
    }

    private static CheckResult toolCheck(String transport, String tool, CallToolResult result, boolean ok, String detail) {
        String name = transport + " " + tool;
        if (ok) {
            return CheckResult.pass(name, detail);
        }
        String text = result.content() == null || result.content().isEmpty() ? ""
                : result.content().getFirst() instanceof McpSchema.TextContent t ? t.text() : "";
        return CheckResult.fail(name, text.isEmpty() ? String.valueOf(result.structuredContent()) : text.strip());
    }

    private static String describe(Exception e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message.lines().findFirst().orElse(""));
    }
}

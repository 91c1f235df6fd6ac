package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile and broken requests on Streamable HTTP, with the token: each gets a proper refusal
 * (a 4xx status, or a JSON-RPC error, or a tool error) and never a 5xx, a hang or a dead server.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProtocolFuzzTest {

    static final String AUTH = "Authorization: Bearer " + TestServer.TOKEN + "\r\n";
    static final String JSON = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    static final McpJsonMapper MAPPER = McpJsonDefaults.getMapper();

    TestServer server;

    @BeforeAll
    void start(@TempDir Path workspace) throws Exception {
        server = TestServer.start(workspace);
    }

    @AfterAll
    void stop() {
        server.close();
    }

    RawHttp.Response post(String headers, String body) throws Exception {
        return RawHttp.post(server.port(), "/mcp-sandbox/mcp", AUTH + headers, body);
    }

    /** A proper refusal: a client error status, or a JSON-RPC response carrying an error. */
    void assertProperlyRefused(String what, RawHttp.Response response) throws Exception {
        assertThat(response.status()).as("%s: %s", what, response.head()).isLessThan(500);
        assertThat(response.body()).as("%s leaks internals", what).doesNotContain("stackTrace").doesNotContain("Exception");
        if (response.status() == 200) {
            Map<String, Object> message = MAPPER.readValue(jsonOf(response.body()), new TypeRef<>() {
            });
            boolean jsonRpcError = message.containsKey("error");
            boolean toolError = message.get("result") instanceof Map<?, ?> result && Boolean.TRUE.equals(result.get("isError"));
            assertThat(jsonRpcError || toolError).as("%s answered 200 without an error: %s", what, response.body()).isTrue();
        } else if (response.status() != 202) {
            assertThat(response.status()).as(what).isBetween(400, 499);
        }
    }

    private static String jsonOf(String body) {
        String trimmed = body.strip();
        // Chunked responses: take the JSON object between the chunk-size lines.
        int start = trimmed.indexOf('{');
        int end = trimmed.lastIndexOf('}');
        return start >= 0 && end > start ? trimmed.substring(start, end + 1) : trimmed;
    }

    @Test
    void namedHostileRequestsAreRefusedProperly() throws Exception {
        Map<String, RawHttp.Response> cases = new java.util.LinkedHashMap<>();
        cases.put("malformed JSON", post(JSON, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"));
        cases.put("not JSON at all", post(JSON, "hello"));
        cases.put("empty body", post(JSON, ""));
        cases.put("JSON null", post(JSON, "null"));
        cases.put("JSON array of junk", post(JSON, "[1,2,3]"));
        cases.put("wrong content type", post("Content-Type: text/plain\r\nAccept: application/json, text/event-stream\r\n",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"));
        cases.put("wrong accept", post("Content-Type: application/json\r\nAccept: text/html\r\n",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"));
        cases.put("jsonrpc 1.0", post(JSON, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"tools/list\"}"));
        cases.put("no method", post(JSON, "{\"jsonrpc\":\"2.0\",\"id\":1}"));
        cases.put("unknown method", post(JSON, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"rm/rf\"}"));
        cases.put("unknown tool", post(JSON, call("no_such_tool", "{}")));
        cases.put("argument of the wrong type", post(JSON, call("run_command", "{\"command\":42}")));
        cases.put("timeout as a string", post(JSON, call("run_command", "{\"command\":\"true\",\"timeout_seconds\":\"9\"}")));
        cases.put("unexpected argument", post(JSON, call("read_file", "{\"path\":\"a\",\"mode\":\"rw\"}")));
        cases.put("missing argument", post(JSON, call("write_file", "{\"path\":\"a\"}")));
        cases.put("arguments not an object", post(JSON, call("read_file", "[\"a\"]")));
        cases.put("deeply nested", post(JSON, call("read_file", "{\"path\":" + "[".repeat(2000) + "]".repeat(2000) + "}")));
        cases.put("over the size limit", post(JSON, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\""
                + "x".repeat(9 * 1024 * 1024) + "\"}}"));
        for (var entry : cases.entrySet()) {
            assertProperlyRefused(entry.getKey(), entry.getValue());
        }
        assertThat(cases.get("over the size limit").status()).isEqualTo(413);
        assertThat(cases.get("wrong content type").status()).isEqualTo(415);
        assertThat(cases.get("wrong accept").status()).isEqualTo(400);
        assertStillHealthy();
    }

    @Test
    void thousandGeneratedPayloadsAreAllRefusedProperly() throws Exception {
        Random random = new Random(20261202);
        List<String> seeds = List.of(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                call("run_command", "{\"command\":\"echo hi\",\"timeout_seconds\":5}"),
                call("read_file", "{\"path\":\"x.txt\"}"),
                call("write_file", "{\"path\":\"x.txt\",\"content\":\"hello\",\"append\":true}"),
                call("edit_file", "{\"path\":\"x.txt\",\"old_text\":\"hello\",\"new_text\":\"bye\"}"),
                call("list_directory", "{\"path\":\".\",\"depth\":2}"),
                call("read_file", "{\"path\":\"x.txt\",\"offset\":1,\"limit\":5}"),
                call("job_output", "{\"id\":\"job-1\",\"offset\":0}"),
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"x\",\"version\":\"1\"}}}");
        String junk = "{}[]\":,0-1e9truefalsenull\\\u0000\u00ff\ud800\u2028 \t\n/..";
        int accepted = 0;
        List<String> generated = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            StringBuilder payload = new StringBuilder(seeds.get(random.nextInt(seeds.size())));
            int mutations = 1 + random.nextInt(4);
            for (int m = 0; m < mutations && !payload.isEmpty(); m++) {
                int at = random.nextInt(payload.length());
                switch (random.nextInt(4)) {
                    case 0 -> payload.deleteCharAt(at);
                    case 1 -> payload.insert(at, junk.charAt(random.nextInt(junk.length())));
                    case 2 -> payload.setLength(at);
                    default -> payload.setCharAt(at, junk.charAt(random.nextInt(junk.length())));
                }
            }
            generated.add(payload.toString());
        }
        for (String payload : generated) {
            RawHttp.Response response = post(JSON, payload);
            assertThat(response.status()).as("payload %s -> %s", payload, response.head()).isLessThan(500);
            assertThat(response.body()).as("payload %s leaks internals", payload).doesNotContain("stackTrace")
                    .doesNotContain("Exception");
            if (response.status() == 200 && !response.body().contains("\"error\"")
                    && !response.body().contains("\"isError\":true")) {
                accepted++; // a mutation that is still a valid request (e.g. a changed id) may succeed
            } else if (response.status() == 200 || response.status() == 202) {
                continue;
            } else {
                assertThat(response.status()).isBetween(400, 499);
            }
        }
        System.out.printf("protocol fuzz: 1000 generated payloads, %d still valid and answered, the rest refused%n", accepted);
        assertStillHealthy();
    }

    private void assertStillHealthy() throws Exception {
        assertThat(RawHttp.send(server.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", null).status())
                .isEqualTo(200);
        RawHttp.Response call = post(JSON, call("run_command", "{\"command\":\"echo still-alive\"}"));
        assertThat(call.status()).isEqualTo(200);
        assertThat(call.body()).contains("still-alive");
    }

    static String call(String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }
}

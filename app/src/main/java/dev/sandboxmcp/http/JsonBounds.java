package dev.sandboxmcp.http;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a message body may become once parsed, and what it costs on the heap. A body's bytes are
 * bounded by the size limit; what they become is bounded by the nesting depth and the token count
 * here (a 3-byte {@code {},} becomes a Java map of some 70 bytes, twice over in the SDK's parse), so
 * that no shape of body costs more than {@link #worstCost} says.
 *
 * <p>That cost covers the parse, not what is kept of a message after it: the envelope's strings
 * (method, id, a call's tool name, its progress token) are kept by the filters, echoed by the SDK
 * in its answer ("Method not found: ...", "Unknown tool: ...", the id) and logged, each copy two
 * bytes a character once one character is past Latin-1. An 8 MiB method or id cost the server
 * several times the body and ran a 128 MiB heap out of memory. So each of those strings has a
 * bound of its own here, far above anything MCP uses and far below the body's size, and the
 * envelope check refuses a message past one ({@link JsonRpcEnvelopeFilter#problemWith}).
 *
 * @param maxBytes         the size limit: also the longest string and the longest document Jackson reads
 * @param maxDepth         arrays and objects nested in one another, at most
 * @param maxTokens        JSON tokens in one body at most (each bracket, name and value is one)
 * @param maxToolNameChars the longest name a {@code tools/call} may give: the catalog's longest tool
 *                         name ({@code ToolDefinitions.longestName}), so a longer one names no tool
 */
record JsonBounds(int maxBytes, int maxDepth, int maxTokens, int maxToolNameChars) {

    /** Tool arguments are flat records; 64 levels leave room for any client's envelope around them. */
    static final int MAX_DEPTH = 64;
    /** A token for every 64 bytes of the size limit: 131,072 for 8 MiB, far more than any tool call has. */
    static final int BYTES_PER_TOKEN = 64;
    /**
     * Heap per body byte while it is handled, at the worst: the body as received (1), the SDK's
     * copy while it reads it (a doubling buffer, up to 2), its string and the parsed tree's strings
     * (measured 2.07 together; two bytes a character once one character is past Latin-1).
     */
    static final int COST_PER_BYTE = 6;
    /**
     * Heap per token while handled: the SDK's tree and the copy it converts the arguments into,
     * measured at 74 to 83 bytes a token over small objects, short strings, many keys and nesting;
     * twice that leaves room for the dispatcher's own reading of the arguments.
     */
    static final int COST_PER_TOKEN = 160;

    /**
     * The longest {@code method}: MCP's longest is {@code notifications/resources/list_changed} (36
     * characters); 128 leaves room for any later one, and a method is echoed in the SDK's "Method
     * not found" answer and in its log line for a notification it has no handler for.
     */
    static final int MAX_METHOD_CHARS = 128;
    /**
     * The longest {@code id} as written (a string's characters, a number's digits), and the longest
     * {@code requestId} of {@code notifications/cancelled}: clients count or use a UUID (36), and an
     * id is kept for the whole call (the cancellation key) and echoed in the answer.
     */
    static final int MAX_ID_CHARS = 256;
    /**
     * The longest {@code params._meta.progressToken} as written: like an id, a client's counter or
     * UUID, and echoed in every progress notification of the call.
     */
    static final int MAX_PROGRESS_TOKEN_CHARS = 256;

    /**
     * The longest string the envelope check reads at all, of those it keeps (jsonrpc, id, method,
     * and of params name, requestId, reason, {@code _meta.progressToken}): past it, the string is
     * refused as Jackson decodes it, before it is whole, so a long one costs the check only a few
     * KiB, never the body's size twice over. Every bound above is within it; a cancellation's reason
     * has none of its own (it is shown to 200 characters).
     */
    static final int MAX_KEPT_CHARS = 4096;

    /** The bounds for bodies of at most {@code maxRequestBytes}, with tool names up to {@code longestToolName}. */
    static JsonBounds forBodies(int maxRequestBytes, int longestToolName) {
        return new JsonBounds(maxRequestBytes, MAX_DEPTH, Math.max(1024, maxRequestBytes / BYTES_PER_TOKEN), longestToolName);
    }

    /** The most a body of {@code bytes} holding {@code tokens} costs on the heap while it is handled. */
    static long worstCost(long bytes, long tokens) {
        return bytes * COST_PER_BYTE + tokens * COST_PER_TOKEN;
    }

    /**
     * The same bounds for Jackson, a little wider than the envelope check's own so that it is the
     * envelope check that refuses, with a message that names the limit.
     */
    StreamReadConstraints constraints() {
        return StreamReadConstraints.builder()
                .maxNestingDepth(maxDepth + 1)
                .maxTokenCount(maxTokens + 1L)
                .maxStringLength(maxBytes)
                .maxDocumentLength(maxBytes)
                .build();
    }

    JsonFactory factory() {
        return JsonFactory.builder().streamReadConstraints(constraints()).build();
    }

    /**
     * The envelope check's parser: these bounds, and strings read only up to {@link #MAX_KEPT_CHARS}
     * (the check reads only the envelope's strings; it skips every other without decoding it).
     */
    JsonFactory envelopeFactory() {
        return JsonFactory.builder().streamReadConstraints(constraints().rebuild()
                .maxStringLength(MAX_KEPT_CHARS).build()).build();
    }

    /** The mapper the SDK's transports and servers parse with: Jackson's defaults, within these bounds. */
    McpJsonMapper mapper() {
        return new JacksonMcpJsonMapper(JsonMapper.builder(factory()).build());
    }
}

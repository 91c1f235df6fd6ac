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
 * @param maxBytes  the size limit: also the longest string and the longest document Jackson reads
 * @param maxDepth  arrays and objects nested in one another, at most
 * @param maxTokens JSON tokens in one body at most (each bracket, name and value is one)
 */
record JsonBounds(int maxBytes, int maxDepth, int maxTokens) {

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

    static JsonBounds forBodies(int maxRequestBytes) {
        return new JsonBounds(maxRequestBytes, MAX_DEPTH, Math.max(1024, maxRequestBytes / BYTES_PER_TOKEN));
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

    /** The mapper the SDK's transports and servers parse with: Jackson's defaults, within these bounds. */
    McpJsonMapper mapper() {
        return new JacksonMcpJsonMapper(JsonMapper.builder(factory()).build());
    }
}

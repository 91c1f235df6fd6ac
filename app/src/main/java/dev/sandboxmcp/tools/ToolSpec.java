package dev.sandboxmcp.tools;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * What a tool says of itself, in one value: what {@code tools/list} shows of it, and what the
 * server checks its calls and results against.
 *
 * @param name         what calls name it by
 * @param title        what a client shows a person (the title MCP's annotations could repeat is left out)
 * @param description  what the model reads to choose it: what it does and its bounds
 * @param inputSchema  JSON Schema text of its arguments
 * @param outputSchema JSON Schema text of its structured result
 * @param hints        what a call does to the world
 */
record ToolSpec(String name, String title, String description, String inputSchema, String outputSchema, Hints hints) {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    /** The tool as the SDK announces it. */
    McpSchema.Tool definition() {
        return McpSchema.Tool.builder()
                .name(name)
                .title(title)
                .description(description)
                .inputSchema(JSON, inputSchema)
                .outputSchema(JSON, outputSchema)
                .annotations(hints.annotations())
                .build();
    }
}

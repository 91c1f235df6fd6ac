package dev.sandboxmcp.tools;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * What a tool says of itself, in one value: what {@code tools/list} shows of it, what the server
 * checks its calls and results against, and what the server needs to know of a call without
 * carrying it out. Built as a phrase: {@code new ToolSpec(...).target("path").instructions("...")}.
 *
 * @param name         what calls name it by
 * @param title        what a client shows a person (the title MCP's annotations could repeat is left out)
 * @param description  what the model reads to choose it: what it does and its bounds
 * @param inputSchema  JSON Schema text of its arguments
 * @param outputSchema JSON Schema text of its structured result
 * @param hints        what a call does to the world
 * @param target       the argument that names what a call is about (the audit's target), or null
 * @param length       how long a call may take, which sets what the server waits for and watches
 * @param instructions its line in the server's instructions (without the leading "- "), or null
 *                     where another tool's line covers it
 */
record ToolSpec(String name, String title, String description, String inputSchema, String outputSchema, Hints hints,
        String target, CallLength length, String instructions) {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    /** A tool whose calls are brief, about nothing in particular, with no line of its own in the instructions. */
    ToolSpec(String name, String title, String description, String inputSchema, String outputSchema, Hints hints) {
        this(name, title, description, inputSchema, outputSchema, hints, null, CallLength.BRIEF, null);
    }

    ToolSpec target(String argument) {
        return new ToolSpec(name, title, description, inputSchema, outputSchema, hints, argument, length, instructions);
    }

    ToolSpec length(CallLength callLength) {
        return new ToolSpec(name, title, description, inputSchema, outputSchema, hints, target, callLength, instructions);
    }

    ToolSpec instructions(String line) {
        return new ToolSpec(name, title, description, inputSchema, outputSchema, hints, target, length, line);
    }

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

package dev.sandboxmcp.tools;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;

/** Builds tool definitions from JSON Schema text. */
final class Schemas {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    private Schemas() {
    }

    static McpSchema.Tool tool(String name, String title, String description, String inputSchema,
            String outputSchema, McpSchema.ToolAnnotations annotations) {
        return McpSchema.Tool.builder()
                .name(name)
                .title(title)
                .description(description)
                .inputSchema(JSON, inputSchema)
                .outputSchema(JSON, outputSchema)
                .annotations(annotations)
                .build();
    }

    /** The hints; the title is the tool's own (clients read it there first), not repeated here. */
    static McpSchema.ToolAnnotations annotations(String title, boolean readOnly, boolean destructive,
            boolean idempotent, boolean openWorld) {
        return new McpSchema.ToolAnnotations(null, readOnly, destructive, idempotent, openWorld, null);
    }
}

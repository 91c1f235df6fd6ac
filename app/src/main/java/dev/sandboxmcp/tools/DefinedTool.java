package dev.sandboxmcp.tools;

import io.modelcontextprotocol.spec.McpSchema;

/** A tool whose definition is fixed when it is built, from what it says of itself. */
abstract class DefinedTool implements SandboxTool {

    private final McpSchema.Tool definition;

    DefinedTool(ToolSpec spec) {
        this.definition = spec.definition();
    }

    @Override
    public final McpSchema.Tool definition() {
        return definition;
    }
}

package dev.sandboxmcp.tools;

import io.modelcontextprotocol.spec.McpSchema;

/** A tool whose definition is fixed when it is built. */
abstract class DefinedTool implements SandboxTool {

    private final McpSchema.Tool definition;

    DefinedTool(McpSchema.Tool definition) {
        this.definition = definition;
    }

    @Override
    public final McpSchema.Tool definition() {
        return definition;
    }
}

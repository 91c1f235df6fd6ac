package dev.sandboxmcp.tools;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;

/** A tool whose definition is fixed when it is built, from what it says of itself. */
abstract class DefinedTool implements SandboxTool {

    private final ToolSpec spec;
    private final McpSchema.Tool definition;

    DefinedTool(ToolSpec spec) {
        this.spec = spec;
        this.definition = spec.definition();
    }

    @Override
    public final McpSchema.Tool definition() {
        return definition;
    }

    @Override
    public final String target(Map<String, Object> arguments) {
        return ToolDefinitions.targetOf(spec, arguments);
    }
}

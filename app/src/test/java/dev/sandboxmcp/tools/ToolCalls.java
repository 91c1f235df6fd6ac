package dev.sandboxmcp.tools;

import java.util.List;
import java.util.Map;

/** Calls a tool's handler the way the runner does, through {@link LocalTools}: a refusal comes back as a result. */
final class ToolCalls {

    private ToolCalls() {
    }

    static ToolResponse call(SandboxTool tool, Map<String, Object> arguments) {
        return new LocalTools(List.of(tool)).execute(tool.definition().name(), arguments, Progress.NONE);
    }
}

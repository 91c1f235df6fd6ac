package dev.sandboxmcp.tools;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;

/** One MCP tool: its definition (schemas, annotations) and its handler. */
public interface SandboxTool {

    McpSchema.Tool definition();

    /** What a call is about (a command, a path, a job's id), for its result and the audit; null when nothing. */
    default String target(Map<String, Object> arguments) {
        return null;
    }

    /**
     * Handles a call; {@code progress} reports on long work where the caller can receive it.
     * Every refusal, of an argument or of the work, is thrown as a {@link ToolRefusal} with the
     * words the assistant reads; {@link LocalTools} turns it into a result with {@code isError}.
     * Anything else thrown is a bug, and becomes a generic tool error there.
     */
    ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal;
}

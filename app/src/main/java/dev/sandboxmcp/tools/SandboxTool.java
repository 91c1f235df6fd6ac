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
     * Expected failures are returned as {@link ToolResponse#failure}; a bad argument may be thrown
     * as {@link ToolInputException}. Anything else thrown is a bug, and the dispatcher turns it
     * into a generic tool error.
     */
    ToolResponse call(ToolArguments arguments, Progress progress) throws ToolInputException;
}

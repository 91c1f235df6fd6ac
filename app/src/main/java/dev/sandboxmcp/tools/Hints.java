package dev.sandboxmcp.tools;

import io.modelcontextprotocol.spec.McpSchema;

/**
 * What a call does to the world, as MCP's tool annotations say it (clients use them to ask
 * before a call, or to retry one). Built as a phrase: {@code Hints.readOnly().idempotent()},
 * {@code Hints.destructive().openWorld()}.
 */
record Hints(boolean readOnlyHint, boolean destructiveHint, boolean idempotentHint, boolean openWorldHint) {

    /** Changes nothing. */
    static Hints readOnly() {
        return new Hints(true, false, false, false);
    }

    /** May change or remove what is there. */
    static Hints destructive() {
        return new Hints(false, true, false, false);
    }

    /** A second call with the same arguments has no further effect. */
    Hints idempotent() {
        return new Hints(readOnlyHint, destructiveHint, true, openWorldHint);
    }

    /** Reaches beyond the workspace: a command may do anything the sandbox lets it. */
    Hints openWorld() {
        return new Hints(readOnlyHint, destructiveHint, idempotentHint, true);
    }

    McpSchema.ToolAnnotations annotations() {
        return new McpSchema.ToolAnnotations(null, readOnlyHint, destructiveHint, idempotentHint, openWorldHint, null);
    }
}

package dev.sandboxmcp.tools;

import java.util.Map;

/**
 * Carries out a call whose arguments already passed the tool's input schema: in this process
 * ({@link LocalTools}, the runner's side) or through the runner's socket (the server's side).
 * Never throws: every failure is a {@link ToolResponse#failure}.
 */
public interface ToolExecutor {

    ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress);

    /** As above; a call the client cancels stops (here: only where the executor can stop it). */
    default ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress,
            CallCancellation cancellation) {
        return execute(tool, arguments, progress);
    }
}

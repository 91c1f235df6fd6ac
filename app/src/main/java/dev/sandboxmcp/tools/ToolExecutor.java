package dev.sandboxmcp.tools;

import java.util.Map;
import java.util.function.Consumer;

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

    /**
     * As above; the room the answer holds in the server's heap ({@link HeapBudget}) goes to
     * {@code keep}, which gives it back once the call's request has been answered.
     */
    default ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress,
            CallCancellation cancellation, Consumer<HeapBudget.Hold> keep) {
        return execute(tool, arguments, progress, cancellation);
    }
}

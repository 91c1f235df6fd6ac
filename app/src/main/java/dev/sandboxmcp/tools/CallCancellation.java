package dev.sandboxmcp.tools;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The client's cancellation of one tool call: {@code notifications/cancelled} for its request id,
 * or the client dropping the HTTP request that carries it. The HTTP layer raises it; whoever
 * carries out the call listens and stops the work.
 */
public final class CallCancellation {

    /** For calls nobody can cancel. */
    public static final CallCancellation NEVER = new CallCancellation();

    private final CompletableFuture<String> reason = new CompletableFuture<>();

    /** Cancels the call, saying why; only the first reason counts. */
    public void cancel(String why) {
        if (this != NEVER) {
            reason.complete(why);
        }
    }

    public boolean cancelled() {
        return reason.isDone();
    }

    /** Why the call was cancelled, or null. */
    public String reason() {
        return reason.getNow(null);
    }

    /** Runs {@code action} with the reason once the call is cancelled (at once if it already is). */
    public void onCancel(Consumer<String> action) {
        reason.thenAccept(action);
    }
}

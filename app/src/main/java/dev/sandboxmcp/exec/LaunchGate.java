package dev.sandboxmcp.exec;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * Holds back every command until the server process has been hardened. The hardening (making
 * the process non-dumpable through the FFM API) costs about 200 ms of method-handle set-up, so
 * it runs in the background while the server starts; only the first command may wait for it.
 */
public final class LaunchGate {

    /** A gate for callers with nothing to wait for. */
    public static final LaunchGate OPEN = new LaunchGate(CompletableFuture.completedFuture(null));

    private final Future<?> ready;

    public LaunchGate(Future<?> ready) {
        this.ready = ready;
    }

    void await() throws InterruptedException {
        try {
            ready.get();
        } catch (ExecutionException e) {
            // the hardening reports its own failure; commands run either way, as before it existed
        }
    }
}

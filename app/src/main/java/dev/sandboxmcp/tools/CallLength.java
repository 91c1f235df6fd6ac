package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import java.time.Duration;
import java.util.Map;

/** How long a call of a tool may take: what the server waits for, and whether it watches the client meanwhile. */
public enum CallLength {

    /** File and job calls: answered within a fixed bound. */
    BRIEF,

    /**
     * A command: as long as its {@code timeout_seconds} (or the default), answered at the call
     * budget at the latest, when it goes on as a job. A client that drops the request meanwhile
     * cancels it, so the server watches the connection.
     */
    OWN_TIMEOUT;

    /** How long the server waits for the runner's answer to a call with these arguments, all told. */
    Duration deadline(Limits limits, Map<String, Object> arguments) {
        Duration margin = limits.killGrace().plusSeconds(15);
        if (this == BRIEF) {
            return margin.plusSeconds(15);
        }
        long seconds = arguments.get("timeout_seconds") instanceof Number n
                ? Math.min(n.longValue(), limits.maxTimeout().toSeconds()) : limits.defaultTimeout().toSeconds();
        seconds = Math.min(seconds, limits.callBudget().toSeconds());
        return Duration.ofSeconds(Math.max(seconds, 1)).plus(margin);
    }
}

package dev.sandboxmcp.exec;

import java.time.Instant;

/** What is known of one background job at a moment; {@code exitCode} is null while it runs. */
public record Job(String id, String command, String cwd, Instant started, boolean running, Integer exitCode,
        long durationMillis, long outputBytes, boolean stopped) {
}

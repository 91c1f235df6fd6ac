package dev.sandboxmcp.exec;

import java.time.Instant;
import java.util.List;

/**
 * What is known of one background job at a moment; {@code exitCode} is null while it runs.
 * {@code streams} names its output logs: {@code output} (stdout and stderr combined) for a job
 * started as one, {@code stdout} and {@code stderr} for a command handed over at its call's budget
 * or a finished command's kept output. {@code timedOut}: its deadline killed it.
 */
public record Job(String id, String command, String cwd, Instant started, boolean running, Integer exitCode,
        long durationMillis, long outputBytes, boolean stopped, boolean timedOut, List<String> streams) {
}

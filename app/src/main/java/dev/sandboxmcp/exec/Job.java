package dev.sandboxmcp.exec;

import java.time.Instant;
import java.util.List;

/**
 * What is known of one background job at a moment. {@code streams} names its output logs:
 * {@code output} (stdout and stderr combined) for a job started as one, {@code stdout} and
 * {@code stderr} for a command handed over at its call's budget or a finished command's kept
 * output. {@code durationMillis}: so far while it runs. {@code stdinOpen}: job_input can write to
 * it (started with its stdin open, not closed since, still running). {@code ending}: null while it runs.
 */
public record Job(String id, String command, String cwd, Instant started, long durationMillis, long outputBytes,
        boolean stopped, List<String> streams, boolean stdinOpen, Ending ending) {

    public boolean running() {
        return ending == null;
    }

    /** The shell's status once it has ended, else null. */
    public Integer exitCode() {
        return ending == null ? null : ending.exitCode();
    }

    /** Whether its deadline killed it. */
    public boolean timedOut() {
        return ending != null && ending.timedOut();
    }
}

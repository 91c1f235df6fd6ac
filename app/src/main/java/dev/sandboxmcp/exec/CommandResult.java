package dev.sandboxmcp.exec;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The outcome of one command. {@code exitCode} is the shell's status (128 + n when a signal
 * ended it), null when the command was handed over to {@code job} at its call's budget and still
 * runs (its logs then keep growing); {@code timedOut} says the runner killed it at its deadline.
 */
public record CommandResult(Integer exitCode, OutputLog stdout, OutputLog stderr, boolean timedOut,
        long durationMillis, Job job) {

    /** The two logs by name, stdout first. */
    public Map<String, OutputLog> streams() {
        return streams(stdout, stderr);
    }

    static Map<String, OutputLog> streams(OutputLog stdout, OutputLog stderr) {
        Map<String, OutputLog> streams = new LinkedHashMap<>();
        streams.put("stdout", stdout);
        streams.put("stderr", stderr);
        return streams;
    }
}

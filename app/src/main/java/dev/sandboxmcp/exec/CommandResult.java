package dev.sandboxmcp.exec;

import java.util.LinkedHashMap;
import java.util.Map;

/** A finished command: its two output logs and how it ended. */
public record CommandResult(OutputLog stdout, OutputLog stderr, Ending ending) implements CommandOutcome {

    public int exitCode() {
        return ending.exitCode();
    }

    public boolean timedOut() {
        return ending.timedOut();
    }

    public long durationMillis() {
        return ending.durationMillis();
    }

    /** The two logs by name, stdout first. */
    public Map<String, OutputLog> streams() {
        Map<String, OutputLog> streams = new LinkedHashMap<>();
        streams.put("stdout", stdout);
        streams.put("stderr", stderr);
        return streams;
    }
}

package dev.sandboxmcp.exec;

/**
 * How a command or job ended, and what it took.
 *
 * @param exitCode       the shell's status (128 + n when signal n ended it)
 * @param durationMillis wall time from its start to the shell's exit
 * @param usage          what its processes took; null where it cannot be measured (no posix_spawn)
 * @param cause          what ended it
 */
public record Ending(int exitCode, long durationMillis, Usage usage, Cause cause) {

    /** What ended a command: itself, or the runner, and why. */
    public sealed interface Cause permits Exited, TimedOut, Stopped, OutOfMemory, DiskFloorStop, InodeFloorStop {
    }

    /** It exited by itself (whatever its status). */
    public record Exited() implements Cause {
    }

    /** Its deadline came: the runner killed its tree. */
    public record TimedOut() implements Cause {
    }

    /** The runner killed its tree on request: stop_job, or the runner shutting down. */
    public record Stopped() implements Cause {
    }

    /**
     * The out-of-memory killer ended it: it died of SIGKILL, not sent by the runner, while the
     * container's count of such kills rose. {@code limitBytes}: the container's memory limit,
     * null when none could be read.
     */
    public record OutOfMemory(Long limitBytes) implements Cause {
    }

    public boolean timedOut() {
        return cause instanceof TimedOut;
    }
}

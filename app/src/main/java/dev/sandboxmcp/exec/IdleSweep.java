package dev.sandboxmcp.exec;

import java.util.List;

/**
 * Kills everything a command left behind that escaped its tree's bookkeeping (a process that
 * both left the command's session and cleared its environment, {@code setsid env -i ...}), at
 * the only moment that can be done without knowing the process: when no command and no job is
 * running, every process of this user but the runner itself (and the container's init) is
 * left over. Only for the runner's own container, where everything of that user is the
 * runner's; {@link #NONE} elsewhere (the jar on a host shares its user with everything else).
 *
 * <p>Commands and jobs {@link #begin()} and {@link #end()}; a sweep runs only while none is
 * active, and none can start until it is over.
 */
public final class IdleSweep {

    /** Never sweeps: outside the runner's container. */
    public static final IdleSweep NONE = new IdleSweep(false);

    private static final int ROUNDS = 20;

    private final boolean enabled;
    private int active;

    private IdleSweep(boolean enabled) {
        this.enabled = enabled;
    }

    /** Sweeps: only in the runner's own container. */
    public static IdleSweep everythingButTheRunner() {
        return new IdleSweep(true);
    }

    synchronized void begin() {
        active++;
    }

    /** Ends a command or job; the last one to end sweeps. */
    synchronized void end() {
        active--;
        if (enabled && active == 0) {
            sweep();
        }
    }

    private void sweep() {
        long self = ProcessHandle.current().pid();
        for (int round = 0; round < ROUNDS; round++) {
            // A fork loop may add processes while we kill; a few rounds catch its children too.
            List<ProcessHandle> leftovers = ProcessHandle.allProcesses()
                    .filter(p -> p.pid() != self && p.pid() != 1)
                    .toList();
            if (leftovers.isEmpty()) {
                return;
            }
            leftovers.forEach(ProcessHandle::destroyForcibly);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}

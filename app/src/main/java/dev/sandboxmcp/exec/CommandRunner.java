package dev.sandboxmcp.exec;

import dev.sandboxmcp.config.Limits;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs shell commands: {@code /bin/sh -lc} in a session of its own, stdin at end of file,
 * stdout and stderr captured up to a cap each, and a deadline after which the whole tree is
 * killed (SIGTERM, then SIGKILL after a grace). When a command returns, whatever it left
 * running in the background is killed too, so nothing outlives the call, unless the command is
 * still running at its call's budget: then it is given back as a {@link RunningCommand}, and
 * whoever takes it (a job) waits for it, with the same deadline and kill.
 */
public final class CommandRunner implements AutoCloseable {

    private final Map<String, String> environment;
    private final int outputCapBytes;
    private final int headBytes;
    private final Duration killGrace;
    private final Semaphore slots;
    private final int maxConcurrent;
    private final Set<RunningCommand> running = ConcurrentHashMap.newKeySet();
    private final IdleSweep sweep;
    private volatile boolean closed;

    /** A runner that keeps only the end of each stream and sweeps nothing. */
    public CommandRunner(Map<String, String> environment, int outputCapBytes, Duration killGrace, int maxConcurrent) {
        this(environment, outputCapBytes, 0, killGrace, maxConcurrent, IdleSweep.NONE);
    }

    /**
     * @param environment   the whole environment commands see (secrets already removed)
     * @param outputCapBytes how much of the end of each stream is kept
     * @param headBytes     how much of the start of each stream is kept besides
     * @param killGrace     how long a process may take to exit after SIGTERM
     * @param maxConcurrent how many commands may run at once (handed over to jobs or not); the
     *                      next one is refused as busy
     * @param sweep         what each command takes part in
     */
    public CommandRunner(Map<String, String> environment, int outputCapBytes, int headBytes, Duration killGrace,
            int maxConcurrent, IdleSweep sweep) {
        this.sweep = sweep;
        this.environment = Map.copyOf(environment);
        this.outputCapBytes = outputCapBytes;
        this.headBytes = headBytes;
        this.killGrace = killGrace;
        this.maxConcurrent = maxConcurrent;
        this.slots = new Semaphore(maxConcurrent);
    }

    /** The runner's: commands under {@code limits}, each taking part in {@code sweep}. */
    public static CommandRunner under(Limits limits, Map<String, String> environment, IdleSweep sweep) {
        return new CommandRunner(environment, limits.outputCapBytes(), limits.outputViewBytes(), limits.killGrace(),
                limits.maxConcurrentCommands(), sweep);
    }

    /** Thrown when {@code maxConcurrent} commands are already running. */
    public static final class BusyException extends Exception {
        BusyException(int limit) {
            super(limit + " commands are already running (the limit); wait for one to finish and try again");
        }
    }

    /** Runs {@code command} to its end (or its deadline), stdin at end of file. */
    public CommandResult run(String command, Path workingDirectory, Duration timeout)
            throws IOException, BusyException, InterruptedException {
        return (CommandResult) run(command, workingDirectory, timeout, null, timeout);
    }

    /**
     * Runs {@code command} with {@code stdin} (when not null) written to it, then closed. A
     * command still running at {@code budget}, when that is shorter than {@code timeout}, is
     * given back running, for the caller to hand over to a job ({@link JobManager#adopt} takes
     * it): it keeps its slot until it ends, and its tree is killed at {@code timeout} all the
     * same. An interrupt (the call was cancelled) kills the whole tree.
     */
    public CommandOutcome run(String command, Path workingDirectory, Duration timeout, byte[] stdin, Duration budget)
            throws IOException, BusyException, InterruptedException {
        if (closed) {
            throw new IOException("the server is shutting down; no new commands are started");
        }
        RunningCommand.Stdin input = stdin == null ? new RunningCommand.Stdin.AtEnd() : new RunningCommand.Stdin.Given(stdin);
        OutputLog stdout = new OutputLog(headBytes, outputCapBytes);
        OutputLog stderr = new OutputLog(headBytes, outputCapBytes);
        AtomicReference<RunningCommand> self = new AtomicReference<>();
        if (!slots.tryAcquire()) {
            throw new BusyException(maxConcurrent);
        }
        sweep.begin(); // before the spawn: the command runs before it is in running
        // From here on, start releases both whatever it throws, and the command's end does otherwise.
        RunningCommand started = RunningCommand.start(command, workingDirectory, environment, input, stdout, stderr,
                timeout, killGrace, () -> {
                    if (self.get() != null) {
                        running.remove(self.get());
                    }
                    sweep.end();
                    slots.release();
                });
        self.set(started);
        running.add(started);
        if (closed) {
            started.kill(); // close() ran while it started, and may not have seen it
        }
        boolean budgeted = budget.compareTo(timeout) < 0;
        boolean exited;
        try {
            exited = started.awaitExit(budgeted ? budget : timeout);
        } catch (Throwable cancelledOrFailed) {
            started.abandon();
            throw cancelledOrFailed;
        }
        if (!exited && budgeted) {
            return started;
        }
        // Timed out or not, nothing the command started may keep running.
        Ending ending = started.finish(!exited);
        return new CommandResult(started.streams().get("stdout"), started.streams().get("stderr"), ending);
    }

    /**
     * Starts {@code true} the way every command starts (a login shell in a session of its own) and
     * waits for it, for the health probe: it fails when no process can be started (the pids limit
     * taken) or the shell does not come back. It takes no slot, so a server busy with commands is
     * still healthy.
     */
    public void probe(Path workingDirectory, Duration deadline) throws IOException, InterruptedException {
        sweep.beginProbe();
        SessionShell.Started shell;
        try {
            shell = SessionShell.start("true", workingDirectory, environment, false, false);
        } catch (Throwable failed) {
            sweep.end();
            throw failed;
        }
        try {
            if (!shell.process().waitFor(deadline.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new IOException("a trivial command did not finish within " + deadline.toMillis() + " ms");
            }
            if (shell.process().exitValue() != 0) {
                throw new IOException("a trivial command exited with " + shell.process().exitValue());
            }
        } finally {
            shell.tree().terminate(Duration.ZERO);
            sweep.end();
        }
    }

    /** The commands running now, those handed over to a job included: what the disk floor watches. */
    Set<RunningCommand> running() {
        return Set.copyOf(running);
    }

    /** The sweep its commands take part in, and the jobs beside them: where the disk floor reads what has begun. */
    IdleSweep sweep() {
        return sweep;
    }

    /** Number of commands running now. */
    public int runningCount() {
        return running.size();
    }

    /** Refuses new commands and kills every running one. */
    @Override
    public void close() {
        closed = true;
        running.parallelStream().forEach(RunningCommand::kill);
    }
}

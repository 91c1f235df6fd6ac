package dev.sandboxmcp.exec;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Runs shell commands: {@code /bin/sh -lc} in a session of its own, stdin at end of file,
 * stdout and stderr captured up to a cap each, and a deadline after which the whole tree is
 * killed (SIGTERM, then SIGKILL after a grace). When a command returns, whatever it left
 * running in the background is killed too, so nothing outlives the call.
 */
public final class CommandRunner implements AutoCloseable {

    private static final Duration PIPE_CLOSE_WAIT = Duration.ofSeconds(2);
    private static final List<Duration> LATE_SWEEPS = List.of(Duration.ofMillis(100), Duration.ofMillis(900));

    private final Map<String, String> environment;
    private final int outputCapBytes;
    private final Duration killGrace;
    private final Semaphore slots;
    private final int maxConcurrent;
    private final Set<ProcessTree> running = ConcurrentHashMap.newKeySet();
    private final IdleSweep sweep;
    private volatile boolean closed;

    /**
     * @param environment   the whole environment commands see (secrets already removed)
     * @param outputCapBytes how much of each stream is kept
     * @param killGrace     how long a process may take to exit after SIGTERM
     * @param maxConcurrent how many commands may run at once; the next one is refused as busy
     */
    public CommandRunner(Map<String, String> environment, int outputCapBytes, Duration killGrace, int maxConcurrent) {
        this(environment, outputCapBytes, killGrace, maxConcurrent, IdleSweep.NONE);
    }

    /** As above; each command takes part in {@code sweep}. */
    public CommandRunner(Map<String, String> environment, int outputCapBytes, Duration killGrace, int maxConcurrent,
            IdleSweep sweep) {
        this.sweep = sweep;
        this.environment = Map.copyOf(environment);
        this.outputCapBytes = outputCapBytes;
        this.killGrace = killGrace;
        this.maxConcurrent = maxConcurrent;
        this.slots = new Semaphore(maxConcurrent);
    }

    /** Thrown when {@code maxConcurrent} commands are already running. */
    public static final class BusyException extends Exception {
        BusyException(int limit) {
            super(limit + " commands are already running (the limit); wait for one to finish and try again");
        }
    }

    public CommandResult run(String command, Path workingDirectory, Duration timeout)
            throws IOException, BusyException, InterruptedException {
        return run(command, workingDirectory, timeout, null);
    }

    /** As {@link #run(String, Path, Duration)}, with {@code stdin} (when not null) written to the command, then closed. */
    public CommandResult run(String command, Path workingDirectory, Duration timeout, byte[] stdin)
            throws IOException, BusyException, InterruptedException {
        if (closed) {
            throw new IOException("the server is shutting down; no new commands are started");
        }
        if (!slots.tryAcquire()) {
            throw new BusyException(maxConcurrent);
        }
        sweep.begin();
        try {
            return runStarted(command, workingDirectory, timeout, stdin);
        } finally {
            sweep.end();
            slots.release();
        }
    }

    private CommandResult runStarted(String command, Path workingDirectory, Duration timeout, byte[] stdin)
            throws IOException, InterruptedException {
        long started = System.nanoTime();
        SessionShell.Started shell = SessionShell.start(command, workingDirectory, environment, stdin != null, false);
        Process process = shell.process();
        ProcessTree tree = shell.tree();
        running.add(tree);
        try {
            OutputCapture stdout = new OutputCapture(outputCapBytes);
            OutputCapture stderr = new OutputCapture(outputCapBytes);
            if (stdin != null) {
                Thread.ofVirtual().name("stdin-" + process.pid()).start(() -> feed(process, stdin));
            }
            Thread stdoutReader = Thread.ofVirtual().name("stdout-" + process.pid())
                    .start(() -> stdout.drain(process.getInputStream()));
            Thread stderrReader = Thread.ofVirtual().name("stderr-" + process.pid())
                    .start(() -> stderr.drain(process.getErrorStream()));

            boolean finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
            // Timed out or not, nothing the command started may keep running.
            tree.terminate(finished ? Duration.ofMillis(200) : killGrace);
            sweepLater(tree);
            int exitCode = process.waitFor();
            long durationMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

            awaitReaders(process, stdoutReader, stderrReader);
            return new CommandResult(exitCode, stdout.snapshot(), stderr.snapshot(), !finished, durationMillis);
        } finally {
            running.remove(tree);
            if (process.isAlive()) {
                tree.terminate(Duration.ZERO);
            }
        }
    }

    /** Writes the whole input, then closes the pipe so the command sees end of file. */
    private static void feed(Process process, byte[] stdin) {
        try (var in = process.getOutputStream()) {
            in.write(stdin);
        } catch (IOException stoppedReading) {
            // the command exited or closed its stdin before reading it all
        }
    }

    /**
     * A process caught between its parent's fork and exit can slip past one scan of /proc; two
     * more sweeps shortly after the call returns catch it without delaying the result.
     */
    private void sweepLater(ProcessTree tree) {
        Thread.ofVirtual().name("sweep").start(() -> {
            for (Duration wait : LATE_SWEEPS) {
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException e) {
                    return;
                }
                tree.terminate(killGrace);
            }
        });
    }

    /**
     * Waits for both pipes to reach end of file. A process that escaped the kill may still hold
     * them open; then the pipes are closed from our side and what was read so far is returned.
     */
    private static void awaitReaders(Process process, Thread stdoutReader, Thread stderrReader)
            throws InterruptedException {
        long deadline = System.nanoTime() + PIPE_CLOSE_WAIT.toNanos();
        for (Thread reader : new Thread[] {stdoutReader, stderrReader}) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                reader.join(Duration.ofNanos(left));
            }
        }
        if (stdoutReader.isAlive() || stderrReader.isAlive()) {
            closeQuietly(process);
        }
    }

    private static void closeQuietly(Process process) {
        try {
            process.getInputStream().close();
            process.getErrorStream().close();
        } catch (IOException ignored) {
            // best effort: the readers keep only bounded data and end with the escaped process
        }
    }

    /**
     * Starts {@code true} the way every command starts (a login shell in a session of its own) and waits for it, for the health probe: it fails when no process can
     * be started (the pids limit taken) or the shell does not come back. It takes no slot, so a
     * server busy with commands is still healthy.
     */
    public void probe(Path workingDirectory, Duration deadline) throws IOException, InterruptedException {
        sweep.begin();
        SessionShell.Started shell;
        try {
            shell = SessionShell.start("true", workingDirectory, environment, false, false);
        } catch (IOException e) {
            sweep.end();
            throw e;
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

    /** Number of commands running now. */
    public int runningCount() {
        return running.size();
    }

    /** Refuses new commands and kills every running one. */
    @Override
    public void close() {
        closed = true;
        running.parallelStream().forEach(tree -> tree.terminate(killGrace));
    }
}

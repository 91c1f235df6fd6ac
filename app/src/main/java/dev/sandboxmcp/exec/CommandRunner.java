package dev.sandboxmcp.exec;

import java.io.IOException;
import java.io.InputStream;
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
 * running in the background is killed too, so nothing outlives the call, unless the call hands
 * the command over to a job at its budget: then the job's deadline and kill take over.
 */
public final class CommandRunner implements AutoCloseable {

    private static final Duration PIPE_CLOSE_WAIT = Duration.ofSeconds(2);
    private static final List<Duration> LATE_SWEEPS = List.of(Duration.ofMillis(100), Duration.ofMillis(900));

    private final Map<String, String> environment;
    private final int outputCapBytes;
    private final int headBytes;
    private final Duration killGrace;
    private final Semaphore slots;
    private final int maxConcurrent;
    private final Set<ProcessTree> running = ConcurrentHashMap.newKeySet();
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

    /** Thrown when {@code maxConcurrent} commands are already running. */
    public static final class BusyException extends Exception {
        BusyException(int limit) {
            super(limit + " commands are already running (the limit); wait for one to finish and try again");
        }
    }

    /**
     * Where a command still running when its call's {@code budget} is spent carries on: as a job
     * of {@code jobs}, listed under {@code cwdLabel}, until its own deadline.
     */
    public record Handover(Duration budget, JobManager jobs, String cwdLabel) {
    }

    public CommandResult run(String command, Path workingDirectory, Duration timeout)
            throws IOException, BusyException, InterruptedException {
        return run(command, workingDirectory, timeout, null, null);
    }

    /**
     * Runs {@code command} with {@code stdin} (when not null) written to it, then closed. With a
     * {@code handover} whose budget is shorter than {@code timeout}, a command still running at
     * the budget is handed over to a job and the result says so ({@link CommandResult#job()}); it
     * keeps its slot until it ends. An interrupt (the call was cancelled) kills the whole tree.
     */
    public CommandResult run(String command, Path workingDirectory, Duration timeout, byte[] stdin, Handover handover)
            throws IOException, BusyException, InterruptedException {
        if (closed) {
            throw new IOException("the server is shutting down; no new commands are started");
        }
        if (!slots.tryAcquire()) {
            throw new BusyException(maxConcurrent);
        }
        sweep.begin();
        boolean handedOver = false;
        try {
            CommandResult result = runStarted(command, workingDirectory, timeout, stdin, handover);
            handedOver = result.job() != null;
            return result;
        } finally {
            if (!handedOver) {
                sweep.end();
                slots.release();
            }
        }
    }

    private CommandResult runStarted(String command, Path workingDirectory, Duration timeout, byte[] stdin,
            Handover handover) throws IOException, InterruptedException {
        long started = System.nanoTime();
        SessionShell.Started shell = SessionShell.start(command, workingDirectory, environment, stdin != null, false);
        Process process = shell.process();
        ProcessTree tree = shell.tree();
        running.add(tree);
        boolean handedOver = false;
        try {
            OutputLog stdout = new OutputLog(headBytes, outputCapBytes);
            OutputLog stderr = new OutputLog(headBytes, outputCapBytes);
            if (stdin != null) {
                SessionShell.pipeThread("stdin-" + process.pid(), () -> feed(process, stdin));
            }
            Thread stdoutReader = SessionShell.pipeThread("stdout-" + process.pid(),
                    () -> drain(process.getInputStream(), stdout));
            Thread stderrReader = SessionShell.pipeThread("stderr-" + process.pid(),
                    () -> drain(process.getErrorStream(), stderr));

            boolean budgeted = handover != null && handover.budget().compareTo(timeout) < 0;
            Duration wait = budgeted ? handover.budget() : timeout;
            boolean finished;
            try {
                finished = process.waitFor(wait.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException cancelled) {
                killCancelled(tree);
                throw cancelled;
            }
            if (!finished && budgeted) {
                Job job = handover.jobs().adopt(command, handover.cwdLabel(), process, tree,
                        CommandResult.streams(stdout, stderr),
                        List.of(stdoutReader, stderrReader),
                        started, timeout, () -> {
                            running.remove(tree);
                            sweep.end();
                            slots.release();
                        });
                handedOver = true;
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                return new CommandResult(null, stdout, stderr, false, millis, job);
            }
            // Timed out or not, nothing the command started may keep running.
            tree.terminate(finished ? Duration.ofMillis(200) : killGrace);
            sweepLater(tree);
            int exitCode = process.waitFor();
            long durationMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

            awaitReaders(process, List.of(stdoutReader, stderrReader));
            return new CommandResult(exitCode, stdout, stderr, !finished, durationMillis, null);
        } finally {
            if (!handedOver) {
                running.remove(tree);
                if (process.isAlive()) {
                    tree.terminate(Duration.ZERO);
                }
            }
        }
    }

    /** The call was cancelled: the whole tree goes, within the grace (SIGTERM, then SIGKILL). */
    private void killCancelled(ProcessTree tree) {
        Thread.interrupted(); // the grace's waits must not be cut short by the cancel itself
        tree.terminate(killGrace);
        sweepLater(tree);
        Thread.currentThread().interrupt();
    }

    /** Reads {@code in} into {@code log} until end of stream, or until the pipe is closed under us. */
    static void drain(InputStream in, OutputLog log) {
        byte[] buffer = new byte[16384];
        try (in) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                log.append(buffer, n);
            }
        } catch (IOException closed) {
            // closed while a process that escaped the kill still held it: keep what we have
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
     * Waits for the pipes to reach end of file. A process that escaped the kill may still hold
     * them open; then the pipes are closed from our side and what was read so far is kept.
     */
    static void awaitReaders(Process process, List<Thread> readers) throws InterruptedException {
        long deadline = System.nanoTime() + PIPE_CLOSE_WAIT.toNanos();
        for (Thread reader : readers) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                reader.join(Duration.ofNanos(left));
            }
        }
        if (readers.stream().anyMatch(Thread::isAlive)) {
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
     * Starts {@code true} the way every command starts (a login shell in a session of its own) and
     * waits for it, for the health probe: it fails when no process can be started (the pids limit
     * taken) or the shell does not come back. It takes no slot, so a server busy with commands is
     * still healthy.
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

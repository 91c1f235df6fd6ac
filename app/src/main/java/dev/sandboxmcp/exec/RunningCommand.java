package dev.sandboxmcp.exec;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A started shell command: its process tree, its output logs filling from reader threads, and
 * its deadline. Whoever holds it waits for it and ends it: {@link CommandRunner} within a call,
 * or {@link JobManager} for a job, or for a command the runner gave back still running at its
 * call's budget (the caller hands it over). Ending it kills whatever the command left behind,
 * collects the last of its output and releases what its starter reserved.
 */
public final class RunningCommand implements CommandOutcome {

    /**
     * The grace of what is still running once the command has ended (its shell exited, or killed
     * within its own grace), when the kill grace is not shorter: it had its chance, and the result
     * does not wait long for it.
     */
    private static final Duration LEFTOVER_GRACE = Duration.ofMillis(200);
    /** The status of a shell killed by SIGKILL, as {@link SpawnedProcess} reports it (or a shell reports its child's). */
    private static final int SIGKILLED = 128 + 9;

    /** What a command's stdin is. */
    sealed interface Stdin {
        /** At end of file from the start. */
        record AtEnd() implements Stdin {
        }

        /** These bytes, then end of file. */
        record Given(byte[] bytes) implements Stdin {
        }

        /** A pipe kept open for input written while it runs ({@link JobInput}). */
        record Open() implements Stdin {
        }
    }

    private final Process process;
    private final ProcessTree tree;
    private final Map<String, OutputLog> streams;
    private final List<Thread> readers;
    private final long startedNanos;
    private final long deadlineNanos;
    private final Duration killGrace;
    private final Runnable release;
    private final AtomicBoolean released = new AtomicBoolean();
    private final JobInput input;
    private final Orphans.Account orphans;
    private final long oomKillsBefore;
    /** Why the runner killed it, once it has. */
    private volatile Ending.Cause killedFor;

    private RunningCommand(SessionShell.Started shell, JobInput input, Map<String, OutputLog> streams,
            List<Thread> readers, long startedNanos, Duration timeout, Duration killGrace, Runnable release) {
        this.process = shell.process();
        this.input = input;
        this.tree = shell.tree();
        this.streams = Collections.unmodifiableMap(streams);
        this.readers = List.copyOf(readers);
        this.startedNanos = startedNanos;
        this.deadlineNanos = timeout == null ? Long.MAX_VALUE : startedNanos + timeout.toNanos();
        this.killGrace = killGrace;
        this.release = release;
        this.oomKillsBefore = MemoryCgroup.OWN.oomKills();
        this.orphans = Orphans.open(tree); // last: nothing after it can fail and leave the account open
    }

    /**
     * Starts {@code command} in {@code directory}. Its stdout fills {@code stdout}; its stderr
     * fills {@code stderr}, or goes into stdout when that is null (one stream, named
     * {@code output}). The tree is killed at {@code timeout} (none when null) by whoever waits for
     * it; {@code release} runs once, when the command has ended (or could not be started).
     */
    static RunningCommand start(String command, Path directory, Map<String, String> environment, Stdin stdin,
            OutputLog stdout, OutputLog stderr, Duration timeout, Duration killGrace, Runnable release)
            throws IOException {
        long started = System.nanoTime();
        SessionShell.Started shell = null;
        try {
            shell = SessionShell.start(command, directory, environment, !(stdin instanceof Stdin.AtEnd), stderr == null);
            Process process = shell.process();
            if (stdin instanceof Stdin.Given(byte[] bytes)) {
                Pipes.thread("stdin-" + process.pid(), () -> Pipes.feed(process, bytes));
            }
            JobInput input = stdin instanceof Stdin.Open ? new JobInput(process.getOutputStream(), "stdin-" + process.pid()) : null;
            Map<String, OutputLog> streams = new LinkedHashMap<>();
            List<Thread> readers = new ArrayList<>();
            streams.put(stderr == null ? "output" : "stdout", stdout);
            readers.add(Pipes.thread("stdout-" + process.pid(), () -> Pipes.drain(process.getInputStream(), stdout)));
            if (stderr != null) {
                streams.put("stderr", stderr);
                readers.add(Pipes.thread("stderr-" + process.pid(), () -> Pipes.drain(process.getErrorStream(), stderr)));
            }
            return new RunningCommand(shell, input, streams, readers, started, timeout, killGrace, release);
        } catch (Throwable failed) {
            // Whatever failed (a thread the pids limit refused is an Error), nothing may stay reserved or running.
            try {
                if (shell != null) {
                    abort(shell);
                }
            } finally {
                release.run();
            }
            throw failed;
        }
    }

    /** Kills a shell whose start failed half-way, and closes our ends of its pipes. */
    private static void abort(SessionShell.Started shell) {
        shell.tree().terminate(Duration.ZERO);
        for (Closeable pipe : List.of(shell.process().getOutputStream(), shell.process().getInputStream(),
                shell.process().getErrorStream())) {
            try {
                pipe.close();
            } catch (IOException ignored) {
                // best effort: the shell is dead, its readers end at end of file
            }
        }
    }

    /** The output logs by name, in the order job_output offers them; they fill while it runs. */
    public Map<String, OutputLog> streams() {
        return streams;
    }

    /** When it started, on {@link System#nanoTime()}'s clock. */
    long startedNanos() {
        return startedNanos;
    }

    /** Milliseconds since it started. */
    public long elapsedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Its stdin, when it was started with it open; null otherwise. */
    JobInput input() {
        return input;
    }

    /** Waits up to {@code wait}, but not past the deadline; true when the shell has exited. */
    boolean awaitExit(Duration wait) throws InterruptedException {
        long until = Math.min(deadlineNanos, System.nanoTime() + wait.toNanos());
        return process.waitFor(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Waits until the shell exits or its deadline passes; true when it exited. */
    boolean awaitExitOrDeadline() throws InterruptedException {
        if (deadlineNanos == Long.MAX_VALUE) {
            process.waitFor();
            return true;
        }
        return process.waitFor(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Waits until every holder of its output pipes has closed them: the command and what it left running. */
    void awaitOutputClosed() throws InterruptedException {
        for (Thread reader : readers) {
            reader.join();
        }
    }

    /** Stops waiting for its output pipes beyond a short while: a process that escaped the kill may hold them. */
    void giveUpOutput() throws InterruptedException {
        Pipes.awaitReaders(process, readers);
    }

    /**
     * Ends it: kills the whole tree (at once when the shell has exited, else within the grace),
     * waits for the shell and the last of its output, reaps what it orphaned, and releases what
     * was reserved for it. {@code timedOut}: its deadline ended it.
     */
    Ending finish(boolean timedOut) throws InterruptedException {
        boolean settled = false;
        try {
            if (timedOut) {
                killedFor(new Ending.TimedOut());
            }
            boolean exited = !process.isAlive();
            if (!exited || leftoversMayRun()) {
                tree.terminate(exited ? leftoverGrace() : killGrace);
            }
            sweepLater();
            int exitCode = process.waitFor();
            long millis = elapsedMillis();
            Pipes.awaitReaders(process, readers);
            Usage orphaned = settle();
            settled = true;
            Usage usage = process instanceof SpawnedProcess spawned ? spawned.usage().plus(orphaned) : null;
            return new Ending(exitCode, millis, usage, cause(exitCode));
        } finally {
            if (!settled) { // interrupted (the call cancelled) or failed on the way
                settle();
            }
            release();
        }
    }

    /** Ends its input and closes its orphan account (both may be done twice); what its orphans took. */
    private Usage settle() {
        if (input != null) {
            input.end();
        }
        return Orphans.close(orphans);
    }

    /**
     * Whether anything of its tree may still run, its shell having exited: where the runner adopts
     * orphans, all it left running is among them and theirs, found in a few reads (one caught in
     * the middle of an exec is looked at again until it can be told); elsewhere it may be
     * anywhere. The late sweeps read all of /proc all the same.
     */
    private boolean leftoversMayRun() {
        List<Long> orphans = Orphans.adopted();
        return orphans == null || tree.mayHaveMembersAmong(orphans);
    }

    private Ending.Cause cause(int exitCode) {
        if (killedFor != null) {
            return killedFor;
        }
        long oomKills = MemoryCgroup.OWN.oomKills();
        if (exitCode == SIGKILLED && oomKillsBefore >= 0 && oomKills > oomKillsBefore) {
            return new Ending.OutOfMemory(MemoryCgroup.OWN.limitBytes());
        }
        return new Ending.Exited();
    }

    /** Kills the whole tree within the grace (SIGTERM, then SIGKILL), not waiting for its output: stop_job, shutdown. */
    void kill() {
        kill(new Ending.Stopped());
    }

    /** As {@link #kill()}, its ending to give {@code why} (the first reason given wins). */
    void kill(Ending.Cause why) {
        killedFor(why);
        if (input != null) {
            input.end(); // it reads no more; a write waiting on it must not wait for what escaped the kill
        }
        tree.terminate(killGrace);
        sweepLater();
    }

    /**
     * As {@link #kill(Ending.Cause)} with no grace, for a command filling the disk: SIGKILL to
     * {@code found}, the members just found writing, then, without waiting, to the rest as the
     * tree's scan finds them.
     */
    void killNow(Ending.Cause why, Collection<Long> found) {
        killedFor(why);
        found.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        Thread.ofVirtual().name("kill-now").start(() -> tree.terminate(Duration.ZERO));
        sweepLater();
    }

    /** Its processes, as the disk floor counts what they wrote. */
    ProcessTree tree() {
        return tree;
    }

    /** Whether the runner is killing it, for whatever reason. */
    boolean killing() {
        return killedFor != null;
    }

    /** Whether the runner has been asked to stop it. */
    boolean stopping() {
        return killedFor instanceof Ending.Stopped;
    }

    private synchronized void killedFor(Ending.Cause cause) {
        if (killedFor == null) {
            killedFor = cause;
        }
    }

    /** Ends it without a result: the call was cancelled, or nobody took it over. */
    void abandon() {
        boolean interrupted = Thread.interrupted(); // the grace's waits must not be cut short by a cancel
        try {
            kill();
        } finally {
            settle();
            release();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void release() {
        if (released.compareAndSet(false, true)) {
            release.run();
        }
    }

    /**
     * Looks for what escaped this scan again shortly after ({@link LateSweeps}), without delaying
     * the result. What a late sweep finds is a leftover: a daemon that ignores SIGTERM is gone
     * {@link #LEFTOVER_GRACE} after it is found, not a whole kill grace.
     */
    private void sweepLater() {
        LateSweeps.SHARED.after(tree, leftoverGrace());
    }

    private Duration leftoverGrace() {
        return killGrace.compareTo(LEFTOVER_GRACE) < 0 ? killGrace : LEFTOVER_GRACE;
    }
}

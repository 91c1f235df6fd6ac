package dev.sandboxmcp.exec;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A child started by {@link PosixSpawn}, seen as a {@link Process}, so the rest of the package
 * handles it as it would one from {@code ProcessBuilder}: its pipes as streams, {@code waitFor},
 * an exit value ({@code 128 + n} for a child killed by signal {@code n}, as {@code ProcessBuilder}
 * reports), {@code onExit}. One platform thread per running child waits for it (a native wait
 * would pin a virtual thread's carrier).
 */
final class SpawnedProcess extends Process {

    private static final ExecutorService REAPERS = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("process-reaper").daemon().factory());

    private final long pid;
    private final OutputStream stdin;
    private final InputStream stdout;
    private final InputStream stderr;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    /** Held while the pid is signalled and while it is reaped, so a reused pid is never signalled. */
    private final Object reaping = new Object();
    private boolean reaped;
    /** Set when reaped, before the exit completes. */
    private volatile Usage usage;
    /** The runner's peak resident size when this child left its address space: the kernel counts it into the child's peak. */
    private final long carriedKib;

    private SpawnedProcess(PosixSpawn.Child child, long carriedKib) throws IOException {
        this.pid = child.pid();
        this.carriedKib = carriedKib;
        this.stdin = child.stdinFd() < 0 ? closedOutput() : Channels.newOutputStream(reopen(child.stdinFd(), StandardOpenOption.WRITE));
        this.stdout = Channels.newInputStream(reopen(child.stdoutFd(), StandardOpenOption.READ));
        this.stderr = child.stderrFd() < 0 ? InputStream.nullInputStream()
                : Channels.newInputStream(reopen(child.stderrFd(), StandardOpenOption.READ));
        REAPERS.execute(this::reap);
    }

    /** Starts {@code argv} as {@link PosixSpawn#spawn} does. */
    static SpawnedProcess start(List<String> argv, Path directory, Map<String, String> environment, boolean pipeStdin,
            boolean mergeStderr) throws IOException {
        return Orphans.spawn(() -> {
            PosixSpawn.Child child = PosixSpawn.spawn(argv, directory, environment, pipeStdin, mergeStderr);
            try {
                return new SpawnedProcess(child, OwnPeak.kib());
            } catch (Throwable failed) {
                // No waiter took it (its thread may be what failed): kill and reap it here, while no orphan reaper can.
                ProcessHandle.of(child.pid()).ifPresent(ProcessHandle::destroyForcibly);
                try {
                    PosixSpawn.reap(child.pid(), 0);
                } catch (IOException | RuntimeException reapFailed) {
                    failed.addSuppressed(reapFailed);
                }
                throw failed;
            } finally {
                PosixSpawn.close(child.stdinFd());
                PosixSpawn.close(child.stdoutFd());
                PosixSpawn.close(child.stderrFd());
            }
        });
    }

    /** What it and the descendants it waited for took; null until it has exited. */
    Usage usage() {
        return usage;
    }

    /**
     * The pipe end, opened again through /proc (Java has no public way to adopt a raw descriptor);
     * opening an anonymous pipe never waits for a peer, unlike a FIFO. A channel, because closing
     * one fails a read or write blocked on it (a pipe that a process which escaped the kill holds
     * and neither writes nor reads), where closing a {@code FileInputStream} or
     * {@code FileOutputStream} leaves its thread blocked.
     */
    private static FileChannel reopen(int fd, StandardOpenOption mode) throws IOException {
        return FileChannel.open(Path.of("/proc/self/fd/" + fd), mode);
    }

    private static OutputStream closedOutput() {
        OutputStream closed = OutputStream.nullOutputStream();
        try {
            closed.close();
        } catch (IOException impossible) {
            throw new AssertionError(impossible);
        }
        return closed; // writes fail as they do on a ProcessBuilder child whose stdin is not a pipe
    }

    private void reap() {
        try {
            PosixSpawn.Reaped child = PosixSpawn.awaitExit(pid, () -> {
                synchronized (reaping) {
                    reaped = true;
                }
            });
            usage = child.usage().hidingBelow(carriedKib);
            int signal = child.status() & 0x7f;
            exit.complete(signal == 0 ? (child.status() >> 8) & 0xff : 0x80 + signal);
        } catch (IOException | RuntimeException e) {
            exit.completeExceptionally(e);
        } finally {
            Orphans.reaped(pid);
        }
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public OutputStream getOutputStream() {
        return stdin;
    }

    @Override
    public InputStream getInputStream() {
        return stdout;
    }

    @Override
    public InputStream getErrorStream() {
        return stderr;
    }

    @Override
    public int waitFor() throws InterruptedException {
        try {
            return exit.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("waiting for process " + pid + " failed", e.getCause());
        }
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        try {
            exit.get(timeout, unit);
            return true;
        } catch (TimeoutException stillRunning) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException("waiting for process " + pid + " failed", e.getCause());
        }
    }

    @Override
    public int exitValue() {
        if (!exit.isDone()) {
            throw new IllegalThreadStateException("process " + pid + " has not exited");
        }
        return exit.join();
    }

    @Override
    public boolean isAlive() {
        return !exit.isDone();
    }

    @Override
    public CompletableFuture<Process> onExit() {
        return exit.handle((code, failure) -> this);
    }

    @Override
    public void destroy() {
        signal(false);
    }

    @Override
    public Process destroyForcibly() {
        signal(true);
        return this;
    }

    @Override
    public boolean supportsNormalTermination() {
        return true;
    }

    private void signal(boolean forcibly) {
        synchronized (reaping) {
            if (!reaped) {
                ProcessHandle.of(pid).ifPresent(forcibly ? ProcessHandle::destroyForcibly : ProcessHandle::destroy);
            }
        }
    }

    @Override
    public String toString() {
        return "SpawnedProcess[pid=" + pid + ", exitValue=" + (exit.isDone() ? exit.join() : "running") + "]";
    }
}

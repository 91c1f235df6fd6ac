package dev.sandboxmcp.exec;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A command's pipes: the threads that read and write them, and how they are given up on. */
final class Pipes {

    private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

    private Pipes() {
    }

    /**
     * Starts a thread that reads or writes one of a command's pipes. A platform thread, because
     * those pipes are plain descriptors that {@code FileInputStream} waits on while holding its
     * carrier: on virtual threads, two quiet commands would stall every other call of a
     * two-CPU runner (JDK's own process pipes avoid this through an internal poller).
     */
    static Thread thread(String name, Runnable body) {
        return Thread.ofPlatform().daemon().name(name).start(body);
    }

    /**
     * Platform threads kept for reading output pipes, for the same reason as {@link #thread}; kept
     * rather than started per command, since starting two threads was a fair part of what a short
     * command costs (a minute idle ends one). As many as the commands running need: those are bounded.
     */
    private static final ExecutorService READERS = Executors.newCachedThreadPool(
            Thread.ofPlatform().daemon().name("pipe-reader-", 0).factory());

    /** Runs {@code body}, reading one of a command's output pipes, on a kept platform thread. */
    static Future<?> reader(Runnable body) {
        return READERS.submit(body);
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
    static void feed(Process process, byte[] stdin) {
        try (var in = process.getOutputStream()) {
            in.write(stdin);
        } catch (IOException stoppedReading) {
            // the command exited or closed its stdin before reading it all
        }
    }

    /**
     * Waits for the readers to reach end of file. A process that escaped the kill may still hold
     * the pipes open; then they are closed from our side and what was read so far is kept.
     */
    static void awaitReaders(Process process, List<Future<?>> readers) throws InterruptedException {
        long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
        for (Future<?> reader : readers) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                await(reader, left);
            }
        }
        if (readers.stream().anyMatch(reader -> !reader.isDone())) {
            try {
                process.getInputStream().close();
                process.getErrorStream().close();
            } catch (IOException ignored) {
                // best effort: the readers keep only bounded data and end with the escaped process
            }
        }
    }

    /** Waits for {@code reader} to end, at most {@code nanos}; a reader never fails ({@link #drain} keeps what it read). */
    private static void await(Future<?> reader, long nanos) throws InterruptedException {
        try {
            reader.get(nanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException stillOpen) {
            // still held open, as the caller sees next
        }
    }

    /** Waits for {@code reader} to reach end of file, however long that takes. */
    static void await(Future<?> reader) throws InterruptedException {
        await(reader, Long.MAX_VALUE);
    }
}

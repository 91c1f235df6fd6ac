package dev.sandboxmcp.exec;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;

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
    static void awaitReaders(Process process, List<Thread> readers) throws InterruptedException {
        long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
        for (Thread reader : readers) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                reader.join(Duration.ofNanos(left));
            }
        }
        if (readers.stream().anyMatch(Thread::isAlive)) {
            try {
                process.getInputStream().close();
                process.getErrorStream().close();
            } catch (IOException ignored) {
                // best effort: the readers keep only bounded data and end with the escaped process
            }
        }
    }
}

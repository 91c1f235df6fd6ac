package dev.sandboxmcp.exec;

import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;

/**
 * A job's standard input, for a job started with it open. Input is written in order by one
 * thread at a time: a pipe write waits while the job does not read and the pipe's buffer is full,
 * so a caller waits only {@link #WAIT} for its bytes to go and is told how many are still
 * pending; the next input is refused until they have gone. Closing it (on request, or when the
 * job ends) gives the job end of file once it has read what was written.
 */
final class JobInput {

    /** How long one call waits for its input to be taken before it returns with some still pending. */
    static final Duration WAIT = Duration.ofSeconds(2);
    private static final int CHUNK = 4096;

    private final OutputStream pipe;
    private final String name;
    private long pending;
    private long written;
    private boolean closed;
    private boolean broken;

    JobInput(OutputStream pipe, String name) {
        this.pipe = pipe;
        this.name = name;
    }

    /** Writes {@code bytes}, then closes the input when {@code close}; waits at most {@link #WAIT}. */
    InputOutcome send(byte[] bytes, boolean close) throws InterruptedException {
        Thread started;
        synchronized (this) {
            if (broken) {
                return new InputOutcome.Refused(InputOutcome.Reason.BROKEN, written);
            }
            if (closed) {
                return new InputOutcome.Refused(InputOutcome.Reason.CLOSED, written);
            }
            if (pending > 0) {
                return new InputOutcome.Refused(InputOutcome.Reason.BUSY, pending);
            }
            pending = bytes.length;
            closed = close;
            started = Pipes.thread(name, () -> write(bytes, close));
        }
        started.join(WAIT);
        synchronized (this) {
            if (broken && pending > 0) {
                return new InputOutcome.Refused(InputOutcome.Reason.BROKEN, written);
            }
            return new InputOutcome.Written(bytes.length - pending, pending, closed);
        }
    }

    private void write(byte[] bytes, boolean close) {
        try {
            for (int at = 0; at < bytes.length; at += CHUNK) {
                int n = Math.min(CHUNK, bytes.length - at);
                pipe.write(bytes, at, n);
                synchronized (this) {
                    pending -= n;
                    written += n;
                }
            }
            if (close) {
                pipe.close();
            }
        } catch (IOException stoppedReading) {
            synchronized (this) {
                broken = true;
            }
            closeQuietly();
        }
    }

    /** Whether more input can be written now or after what is pending. */
    synchronized boolean open() {
        return !closed && !broken;
    }

    /**
     * The job has ended: the pipe is closed, even under a write still waiting on it (a process
     * that escaped the kill may hold it without reading): the write fails and its thread ends,
     * as the pipe is a channel that a close interrupts ({@link SpawnedProcess}).
     */
    void end() {
        synchronized (this) {
            closed = true;
        }
        closeQuietly();
    }

    private void closeQuietly() {
        try {
            pipe.close();
        } catch (IOException ignored) {
            // already closed, or the job's end is gone
        }
    }
}

package dev.sandboxmcp.http;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.thread.Scheduler;

/** Closes a connection when what it was to receive has not all arrived in time; cancelled once it has. */
final class ReadDeadline implements Runnable {

    private final AtomicBoolean pending = new AtomicBoolean(true);
    private final EndPoint endPoint;
    private final String what;
    private final Duration timeout;
    private final Scheduler.Task task;

    ReadDeadline(Scheduler scheduler, EndPoint endPoint, String what, Duration timeout) {
        this.endPoint = endPoint;
        this.what = what;
        this.timeout = timeout;
        this.task = scheduler.schedule(this, timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void run() {
        if (pending.compareAndSet(true, false)) {
            endPoint.close(new TimeoutException(what + " not received within " + timeout.toMillis() + " ms"));
        }
    }

    void cancel() {
        if (pending.compareAndSet(true, false)) {
            task.cancel();
        }
    }
}

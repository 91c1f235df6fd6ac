package dev.sandboxmcp.runner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a runner in its own container learns the secret of this start, in the channel's directory
 * (the server's; the runner's container mounts it read-only). The server publishes a one-time
 * {@value #TICKET} with the secret only while no runner is connected and no process holds a
 * flock on {@value #LOCK}, and only after that lock has been free for {@code grace}. The runner's
 * init (PID 1 of its container, {@code infra/image/runner-init}) holds a shared flock on it from
 * before it starts the runner's JVM until it has exited itself, and the kernel kills the rest of
 * its PID namespace as it exits: by the end of the grace the container of a runner that died is
 * gone, with every command it started. The runner's JVM holds no lock: a command (the runner's
 * user) can starve PID 1 ({@code chrt --idle -p 0 1}, {@code renice 19 -p 1}, then busy loops)
 * and kill the JVM, and a lock of the JVM's would then be free long before PID 1 ran again to
 * end the container, while a command waits for the next ticket. The init's lock frees only as PID
 * 1 exits, however long that takes. The lock is flock(2) ({@link Flock}), which is all bash can
 * take; POSIX record locks (Java's {@code FileChannel.lock}) do not count. On a new channel volume (no {@value #LOCK} yet, which only the server creates)
 * there is no grace: no ticket was ever published there, so no runner ever had a secret from it,
 * and no command of one can exist. It rotates the secret as it publishes, and deletes the ticket the moment a
 * runner proves itself with it, before that runner is sent any call, so no command ever exists
 * while the ticket does. Alongside, {@value #STATE} tells the runner's init and Docker health check what
 * the server last heard from it.
 */
public final class TicketOffice implements AutoCloseable {

    public static final String TICKET = "ticket";
    public static final String LOCK = "runner.lock";
    public static final String STATE = "runner.state";
    static final Duration TICK = Duration.ofMillis(200);
    /** How often {@value #STATE} is written. */
    static final Duration STATE_EVERY = Duration.ofSeconds(5);
    /**
     * How long a line of {@value #STATE} stays current, written into it: an older one means this
     * server is not writing (down, restarting), which is no fault of the runner's.
     */
    static final Duration STATE_FRESH_FOR = STATE_EVERY.multipliedBy(6);
    private static final Logger LOG = LoggerFactory.getLogger(TicketOffice.class);

    private final Path directory;
    private final ChannelListener listener;
    private final RunnerLink link;
    private final Duration grace;
    private final BooleanSupplier healthy;
    private final Thread clerk;
    private long lockFreeSince = -1;
    /** No runner has ever had a secret from this volume: the first ticket needs no grace. */
    private boolean newVolume;
    private volatile boolean published;
    private long lastState;
    /** One write of {@value #STATE} at a time, so that they land in order. */
    private final AtomicBoolean writingState = new AtomicBoolean();
    private State state = State.NONE; // guarded by this
    private volatile boolean closed;

    private TicketOffice(Path directory, ChannelListener listener, RunnerLink link, Duration grace, BooleanSupplier healthy,
            boolean newVolume) {
        this.directory = directory;
        this.listener = listener;
        this.link = link;
        this.grace = grace;
        this.healthy = healthy;
        this.newVolume = newVolume;
        this.clerk = Thread.ofPlatform().name("channel-tickets").daemon().unstarted(this::run);
    }

    /**
     * Starts publishing tickets in the socket's directory for {@code listener}; every few seconds
     * {@value #STATE} says whether the runner is connected and, if so, whether {@code healthy}.
     */
    public static TicketOffice start(ChannelListener listener, RunnerLink link, Duration grace, BooleanSupplier healthy)
            throws IOException {
        Path directory = listener.socket().toAbsolutePath().getParent();
        Files.deleteIfExists(directory.resolve(TICKET));
        Path lock = directory.resolve(LOCK);
        boolean newVolume = !Files.exists(lock);
        if (newVolume) {
            Files.createFile(lock, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        }
        TicketOffice office = new TicketOffice(directory, listener, link, grace, healthy, newVolume);
        listener.onProven(office::proven);
        office.clerk.start();
        return office;
    }

    /** A runner proved itself with the ticket: it is deleted before the runner gets its first call. */
    private synchronized void proven() {
        try {
            Files.deleteIfExists(directory.resolve(TICKET));
        } catch (IOException e) {
            LOG.error("could not delete the runner's ticket: {}", e.toString());
        }
        published = false;
        lockFreeSince = -1;
        newVolume = false;
    }

    private void run() {
        while (!closed) {
            try {
                tick();
                Thread.sleep(TICK);
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                LOG.warn("the channel's ticket office: {}", e.toString());
            }
        }
    }

    private synchronized void tick() throws IOException {
        long now = System.nanoTime();
        if (now - lastState > STATE_EVERY.toNanos() && writingState.compareAndSet(false, true)) {
            lastState = now;
            Thread.ofVirtual().start(this::writeState);
        }
        if (link.connected() || published) {
            return;
        }
        if (lockHeld()) {
            lockFreeSince = -1; // a runner's container lives and keeps its secret; it reconnects with it or exits when refused
            return;
        }
        if (lockFreeSince < 0) {
            lockFreeSince = now;
        }
        if (newVolume || now - lockFreeSince >= grace.toNanos()) {
            Secret secret = listener.rotate();
            Path temporary = directory.resolve(TICKET + ".new");
            Files.deleteIfExists(temporary);
            Files.writeString(temporary, secret.hex() + "\n", StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
            Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
            Files.move(temporary, directory.resolve(TICKET), StandardCopyOption.ATOMIC_MOVE);
            published = true;
            LOG.info(newVolume ? "a new channel volume: published a ticket for the first runner"
                    : "no runner for " + TimeUnit.NANOSECONDS.toMillis(now - lockFreeSince)
                            + " ms: published a ticket for the next one");
        }
    }

    /** Whether some process (the runner's init) holds a flock on {@value #LOCK}. */
    private boolean lockHeld() throws IOException {
        return Flock.held(directory.resolve(LOCK));
    }

    private void writeState() {
        try {
            Status status = !link.connected() ? Status.DISCONNECTED : healthy.getAsBoolean() ? Status.OK : Status.FAILING;
            State now;
            synchronized (this) {
                state = state.next(status, System.currentTimeMillis() / 1000, System.nanoTime());
                now = state;
            }
            Path temporary = directory.resolve(STATE + ".new");
            Files.writeString(temporary, now.line(), StandardCharsets.US_ASCII);
            Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
            Files.move(temporary, directory.resolve(STATE), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not write the runner's state for its init and health check: {}", e.toString());
        } finally {
            writingState.set(false);
        }
    }

    /** What the server last heard from the runner, written to {@value #STATE} as its {@link #word}. */
    enum Status {
        OK, FAILING, DISCONNECTED;

        String word() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * What {@value #STATE} says: the runner's {@code status}, when that was written ({@code at},
     * epoch seconds), for how many seconds the runner had then been ok, or not ok (failing and
     * disconnected alike), measured on the monotonic clock so that a step of the wall clock cannot
     * stretch or hide a failure, and for how many seconds after {@code at} the line is current
     * ({@link #STATE_FRESH_FOR}, so that its readers need no number of their own). The runner's init restarts its container from these
     * ({@code infra/image/runner-init}): a count of its own would live where the runner's commands
     * can write.
     */
    record State(Status status, long at, long sinceNanos, long nanos) {

        /** Before the first write. */
        static final State NONE = new State(null, 0, 0, 0);

        State next(Status status, long at, long nanos) {
            boolean continues = this.status != null && (status == Status.OK) == (this.status == Status.OK);
            return new State(status, at, continues ? sinceNanos : nanos, nanos);
        }

        long heldSeconds() {
            return TimeUnit.NANOSECONDS.toSeconds(nanos - sinceNanos);
        }

        String line() {
            return status.word() + " " + at + " " + heldSeconds() + " " + STATE_FRESH_FOR.toSeconds() + "\n";
        }
    }

    @Override
    public void close() {
        closed = true;
        clerk.interrupt();
    }
}

package dev.sandboxmcp.runner;

import dev.sandboxmcp.config.Limits;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may connect: the server listens on the channel's socket, in a directory only it can write
 * (the runner's container mounts it read-only), and a connection becomes the runner's only when
 * its first line is a {@link Protocol.Hello} with the secret of this start, within
 * {@link #HELLO_DEADLINE}. At most {@link #MAX_UNPROVEN} connections wait for their hello at once;
 * the rest are closed at once; a connection that does not prove itself keeps its place among
 * them until it is closed. Every one that does not prove itself is closed, and logged at the 1st,
 * 2nd, 4th, 8th... of its kind (one that sent a wrong line, or one that sent nothing).
 */
public final class ChannelListener implements AutoCloseable {

    static final int MAX_UNPROVEN = 8;
    static final Duration HELLO_DEADLINE = Duration.ofSeconds(2);
    /** A hello is a line of about a hundred bytes. */
    static final Bounds HELLO = new Bounds(1024, 64, 4, 256);
    private static final Logger LOG = LoggerFactory.getLogger(ChannelListener.class);

    private final Path socket;
    private final ServerSocketChannel listener;
    private final RunnerLink link;
    private final Bounds runnerSends;
    private final Limits limits;
    private final Semaphore unproven = new Semaphore(MAX_UNPROVEN);
    private final ScheduledThreadPoolExecutor deadlines = helloDeadlines();
    /** Refusals of connections closed unread because {@link #MAX_UNPROVEN} already wait. */
    private final AtomicLong refusedAtOnce = new AtomicLong();
    /** Refusals of connections that sent a line that is not this start's hello. */
    private final AtomicLong refusedLines = new AtomicLong();
    /** Refusals of connections that ended, broke or stayed silent before their hello. */
    private final AtomicLong refusedSilences = new AtomicLong();
    private volatile Secret expected = Secret.random();
    private volatile Runnable onProven = () -> { };
    private volatile boolean closed;

    private ChannelListener(Path socket, ServerSocketChannel listener, RunnerLink link, Bounds runnerSends, Limits limits) {
        this.socket = socket;
        this.listener = listener;
        this.link = link;
        this.runnerSends = runnerSends;
        this.limits = limits;
    }

    /**
     * Listens on {@code socket} (replacing a stale one of an earlier start: the directory is the
     * server's) and hands each runner that proves itself to {@code link}, welcoming it with
     * {@code limits} (the runner serves under them; what it sends is read within
     * {@code runnerSends}, which the server derived from them and no runner can move).
     */
    public static ChannelListener start(Path socket, RunnerLink link, Bounds runnerSends, Limits limits)
            throws IOException {
        Files.deleteIfExists(socket);
        ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
        // connect(2) needs write permission on the socket; the runner is another user.
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        ChannelListener channel = new ChannelListener(socket, listener, link, runnerSends, limits);
        Thread.ofPlatform().name("channel-accept").daemon().start(channel::acceptLoop);
        LOG.info("listening for the runner on {}", socket);
        return channel;
    }

    /** A new secret: from now on only a hello with it is taken; the one before is refused. */
    Secret rotate() {
        Secret secret = Secret.random();
        expected = secret;
        return secret;
    }

    /** Runs {@code action} each time a runner has proved itself, before it is welcomed. */
    void onProven(Runnable action) {
        onProven = action;
    }

    public Path socket() {
        return socket;
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel connection;
            try {
                connection = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("the channel's accept failed: {}", e.toString());
                }
                return;
            }
            if (!unproven.tryAcquire()) {
                closeQuietly(connection);
                log(refusedAtOnce, "closed at once, " + MAX_UNPROVEN + " already wait for their hello");
                continue;
            }
            Thread.ofVirtual().name("channel-hello").start(() -> prove(connection));
        }
    }

    /**
     * One timer for every hello's deadline. A cancelled deadline leaves its queue at once: kept for
     * its 2 s, each would hold its connection's buffers, and a command that connects and closes in
     * a loop would fill the heap with them.
     */
    private static ScheduledThreadPoolExecutor helloDeadlines() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().name("channel-hello-deadline").daemon().factory());
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** Hello deadlines not yet due or cancelled. */
    int helloDeadlinesWaiting() {
        return deadlines.getQueue().size();
    }

    /** Connections refused so far, of every kind (closed at once, silent, a wrong line). */
    long refusedSoFar() {
        return refusedAtOnce.get() + refusedSilences.get() + refusedLines.get();
    }

    private void prove(SocketChannel connection) {
        Peer peer = new Peer(connection, Protocol.Sender.RUNNER, HELLO);
        ScheduledFuture<?> deadline = deadlines.schedule(peer::close, HELLO_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
        try {
            Protocol.Message first = peer.receive(Protocol.Phase.HELLO);
            deadline.cancel(false);
            if (!(first instanceof Protocol.Hello hello)) {
                refuseSilence(peer, "the connection ended before its hello");
                return;
            }
            if (hello.version() != Protocol.VERSION) {
                refuse(peer, "protocol version " + hello.version() + ", this server speaks " + Protocol.VERSION);
                return;
            }
            if (!expected.matches(hello.secret())) {
                refuse(peer, "the secret is not this start's (the server restarted, or this is not the runner); a runner "
                        + "that gets this exits so that its container restarts");
                return;
            }
        } catch (Protocol.Violation e) {
            refuse(peer, "its first line is not a hello: " + e.getMessage());
            return;
        } catch (RuntimeException e) {
            refuseSilence(peer, "its hello could not be read: " + e);
            return;
        } catch (IOException e) {
            refuseSilence(peer, deadline.isDone() && !deadline.isCancelled() ? "no hello within "
                    + HELLO_DEADLINE.toMillis() + " ms" : "the connection broke before its hello: " + e.getMessage());
            return;
        } finally {
            deadline.cancel(false);
        }
        unproven.release();
        onProven.run();
        peer.bound(runnerSends);
        peer.send(new Protocol.Welcome(limits));
        LOG.info("the runner proved itself and is connected");
        link.serve(peer);
        LOG.warn("the runner's connection ended");
    }

    /** Tells a connection that sent a wrong line why, closes it, and only then frees its place. */
    private void refuse(Peer peer, String why) {
        log(refusedLines, why);
        peer.send(new Protocol.Refused(why.length() <= Protocol.REASON_CHARS ? why : why.substring(0, Protocol.REASON_CHARS)));
        Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(100); // lets the refusal go out before the close
            } catch (InterruptedException ignored) {
                // closing now
            } finally {
                peer.close();
                unproven.release();
            }
        });
    }

    /** Closes a connection that ended or said nothing (nobody would read a refusal), then frees its place. */
    private void refuseSilence(Peer peer, String why) {
        log(refusedSilences, why);
        peer.close();
        unproven.release();
    }

    /**
     * Logs the 1st, 2nd, 4th, 8th... refusal of a kind: a command's flood must not push the audit
     * out of the log, and one kind's flood must not hide another kind's first refusal.
     */
    private static void log(AtomicLong kind, String why) {
        long count = kind.incrementAndGet();
        if (Long.bitCount(count) == 1) {
            LOG.warn("refused a connection on the channel: {} ({} of this kind so far)", why, count);
        }
    }

    private static void closeQuietly(SocketChannel connection) {
        try {
            connection.close();
        } catch (IOException ignored) {
            // refusing
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            LOG.debug("closing the channel's socket: {}", e.toString());
        }
        deadlines.shutdownNow();
    }
}

package dev.sandboxmcp.http;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells when the client of a request being handled goes away. Jetty reads nothing from a
 * connection while its request is handled (the body is in), so it never learns that the client
 * closed it; the kernel does: the connection's TCP state turns to CLOSE_WAIT when the client's FIN
 * arrives, and the connection leaves the table when it resets. This watches that state in
 * {@code /proc/self/net/tcp} and {@code tcp6} (this process's network namespace) twice a second,
 * one reading of the tables for every watched call. A client that only half-closes (shuts down
 * its sending side but waits for the answer) looks the same and is taken as gone too, as nginx
 * takes it.
 */
final class ClientDisconnect implements AutoCloseable {

    static final Duration INTERVAL = Duration.ofMillis(500);
    private static final List<Path> TABLES = List.of(Path.of("/proc/self/net/tcp"), Path.of("/proc/self/net/tcp6"));
    private static final String ESTABLISHED = "01";
    private static final String CLOSE_WAIT = "08";
    private static final Logger LOG = LoggerFactory.getLogger(ClientDisconnect.class);

    /** One thread looks at every watched connection, while there is one: a watch costs a set entry. */
    private static final ScheduledThreadPoolExecutor LOOKS = new ScheduledThreadPoolExecutor(1,
            Thread.ofPlatform().name("client-disconnect").daemon().factory());
    private static final Set<ClientDisconnect> WATCHED = ConcurrentHashMap.newKeySet();
    private static ScheduledFuture<?> looking; // guarded by ClientDisconnect.class

    /** A connection as the tables name it: our port, the client's address and port. */
    record Connection(int localPort, InetAddress remote, int remotePort) { }

    private final Connection connection;
    private final Runnable action;
    private final long since = System.nanoTime();
    private boolean seen; // only the looking thread reads and writes it
    private final AtomicBoolean over = new AtomicBoolean();

    private ClientDisconnect(Connection connection, Runnable action) {
        this.connection = connection;
        this.action = action;
    }

    /**
     * Runs {@code action} once if the client of the connection from {@code remoteAddress}:{@code
     * remotePort} to our {@code localPort} closes it before this watch is closed.
     */
    static ClientDisconnect watch(String remoteAddress, int remotePort, int localPort, Runnable action) {
        InetAddress remote;
        try {
            remote = InetAddress.ofLiteral(remoteAddress);
        } catch (IllegalArgumentException notAnAddress) {
            return new ClientDisconnect(null, () -> { }); // nothing to look for
        }
        ClientDisconnect watch = new ClientDisconnect(new Connection(localPort, remote, remotePort), action);
        synchronized (ClientDisconnect.class) {
            WATCHED.add(watch);
            if (looking == null) {
                long interval = INTERVAL.toMillis();
                looking = LOOKS.scheduleWithFixedDelay(ClientDisconnect::lookAtAll, interval, interval, TimeUnit.MILLISECONDS);
            }
        }
        return watch;
    }

    /** Never throws: whatever a scheduled task throws ends its schedule, the looking for every call. */
    private static void lookAtAll() {
        try {
            lookAtAllOnce();
        } catch (RuntimeException | Error e) {
            LOG.error("looking for clients that went away", e);
        }
    }

    private static void lookAtAllOnce() {
        synchronized (ClientDisconnect.class) {
            if (WATCHED.isEmpty()) {
                looking.cancel(false);
                looking = null;
                return;
            }
        }
        long now = System.nanoTime();
        Map<Connection, String> states = null;
        for (ClientDisconnect watch : WATCHED) {
            if (now - watch.since < INTERVAL.toNanos()) {
                continue; // most calls are over before their first look
            }
            if (states == null) {
                states = states();
            }
            watch.look(states.get(watch.connection));
        }
    }

    private void look(String state) {
        if (CLOSE_WAIT.equals(state) || (state == null && seen)) {
            if (over.compareAndSet(false, true)) {
                WATCHED.remove(this);
                try {
                    action.run();
                } catch (RuntimeException | Error e) { // the other calls of this look are still to be told
                    LOG.error("acting on a client that went away", e);
                }
            }
            return;
        }
        seen |= ESTABLISHED.equals(state);
    }

    /** Every TCP connection of this process's network namespace and its state (two hex digits). */
    static Map<Connection, String> states() {
        Map<Connection, String> states = new HashMap<>();
        for (Path table : TABLES) {
            List<String> lines;
            try {
                lines = Files.readAllLines(table);
            } catch (IOException | RuntimeException unreadable) {
                continue;
            }
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String[] fields = line.strip().split("\\s+");
                if (fields.length > 3) {
                    states.putIfAbsent(new Connection(port(fields[1]), address(fields[2]), port(fields[2])), fields[3]);
                }
            }
        }
        return states;
    }

    private static int port(String endpoint) {
        return Integer.parseInt(endpoint.substring(endpoint.indexOf(':') + 1), 16);
    }

    /** The address of {@code hex:port}: 32-bit words in the kernel's (little-endian) byte order. */
    private static InetAddress address(String endpoint) {
        byte[] raw = HexFormat.of().parseHex(endpoint.substring(0, endpoint.indexOf(':')));
        byte[] ordered = new byte[raw.length];
        for (int word = 0; word < raw.length; word += 4) {
            for (int i = 0; i < 4; i++) {
                ordered[word + i] = raw[word + 3 - i];
            }
        }
        try {
            return InetAddress.getByAddress(ordered); // an IPv4-mapped IPv6 address comes back as IPv4
        } catch (UnknownHostException impossible) {
            return null;
        }
    }

    @Override
    public void close() {
        over.set(true);
        WATCHED.remove(this);
    }
}

package dev.sandboxmcp.http;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Tells when the client of a request being handled goes away. Jetty reads nothing from a
 * connection while its request is handled (the body is in), so it never learns that the client
 * closed it; the kernel does: the connection's TCP state turns to CLOSE_WAIT when the client's FIN
 * arrives, and the connection leaves the table when it resets. This watches that state in
 * {@code /proc/self/net/tcp} and {@code tcp6} (this process's network namespace) twice a second.
 * A client that only half-closes (shuts down its sending side but waits for the answer) looks
 * the same and is taken as gone too, as nginx takes it.
 */
final class ClientDisconnect implements AutoCloseable {

    static final Duration INTERVAL = Duration.ofMillis(500);
    private static final List<Path> TABLES = List.of(Path.of("/proc/self/net/tcp"), Path.of("/proc/self/net/tcp6"));
    private static final String ESTABLISHED = "01";
    private static final String CLOSE_WAIT = "08";

    /** One thread looks at every watched connection: a watch costs a scheduled task, not a thread. */
    private static final ScheduledThreadPoolExecutor LOOKS = looks();

    private static ScheduledThreadPoolExecutor looks() {
        ScheduledThreadPoolExecutor looks = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().name("client-disconnect").daemon().factory());
        looks.setRemoveOnCancelPolicy(true); // a call that ends leaves nothing queued behind it
        return looks;
    }

    private final InetAddress remote;
    private final int remotePort;
    private final int localPort;
    private final Runnable action;
    private volatile ScheduledFuture<?> looking;
    private boolean seen;
    private volatile boolean closed;

    private ClientDisconnect(InetAddress remote, int remotePort, int localPort, Runnable action) {
        this.remote = remote;
        this.remotePort = remotePort;
        this.localPort = localPort;
        this.action = action;
    }

    private ClientDisconnect start() {
        // Most calls are over before the first look.
        long interval = INTERVAL.toMillis();
        looking = LOOKS.scheduleWithFixedDelay(this::look, interval, interval, TimeUnit.MILLISECONDS);
        return this;
    }

    private void look() {
        if (closed) {
            return;
        }
        String state = state(remote, remotePort, localPort);
        if (CLOSE_WAIT.equals(state) || (state == null && seen)) {
            looking.cancel(false);
            if (!closed) {
                action.run();
            }
            return;
        }
        seen |= ESTABLISHED.equals(state);
    }

    /**
     * Runs {@code action} once if the client of the connection from {@code remoteAddress}:{@code
     * remotePort} to our {@code localPort} closes it before this watch is closed.
     */
    static ClientDisconnect watch(String remoteAddress, int remotePort, int localPort, Runnable action) {
        try {
            return new ClientDisconnect(InetAddress.ofLiteral(remoteAddress), remotePort, localPort, action).start();
        } catch (IllegalArgumentException notAnAddress) {
            return new ClientDisconnect(null, remotePort, localPort, () -> { }).start();
        }
    }

    /** The connection's state (two hex digits), or null when the table does not hold it. */
    static String state(InetAddress remote, int remotePort, int localPort) {
        if (remote == null) {
            return null;
        }
        for (Path table : TABLES) {
            List<String> lines;
            try {
                lines = Files.readAllLines(table);
            } catch (IOException | RuntimeException unreadable) {
                continue;
            }
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String[] fields = line.strip().split("\\s+");
                if (fields.length > 3 && port(fields[1]) == localPort && port(fields[2]) == remotePort
                        && remote.equals(address(fields[2]))) {
                    return fields[3];
                }
            }
        }
        return null;
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
        closed = true;
        looking.cancel(false);
    }
}

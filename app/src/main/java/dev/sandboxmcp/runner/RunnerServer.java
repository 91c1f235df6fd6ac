package dev.sandboxmcp.runner;

import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.ToolExecutor;
import dev.sandboxmcp.tools.ToolResponse;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runner's end of the channel: listens on a Unix socket and carries out one call per
 * connection with the tools of this process. The socket is made connectable by any user
 * (mode 0666), because the server runs as another user; the directory it lies in is shared by
 * the two containers only. At most {@code maxConnections} are served at once; past that a
 * connection gets a "busy" reply and is closed.
 */
public final class RunnerServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RunnerServer.class);

    private final Path socket;
    private final ServerSocketChannel listener;
    private final ToolExecutor tools;
    private final HealthProbe health;
    private final int maxRequestBytes;
    private final Semaphore connections;
    private final Thread acceptor;
    private volatile boolean closed;

    private RunnerServer(Path socket, ServerSocketChannel listener, ToolExecutor tools, HealthProbe health,
            int maxRequestBytes, int maxConnections) {
        this.socket = socket;
        this.listener = listener;
        this.tools = tools;
        this.health = health;
        this.maxRequestBytes = maxRequestBytes;
        this.connections = new Semaphore(maxConnections);
        this.acceptor = Thread.ofPlatform().name("runner-accept").start(this::acceptLoop);
    }

    /** Binds {@code socket} (replacing a stale one left by an earlier run) and starts serving. */
    public static RunnerServer start(Path socket, ToolExecutor tools, HealthProbe health, int maxRequestBytes,
            int maxConnections) throws IOException {
        Files.deleteIfExists(socket);
        ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        LOG.info("runner listening on {}", socket);
        return new RunnerServer(socket, listener, tools, health, maxRequestBytes, maxConnections);
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel connection;
            try {
                connection = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("runner socket accept failed: {}", e.toString());
                }
                return;
            }
            Thread.ofVirtual().name("runner-call").start(() -> serve(connection));
        }
    }

    private void serve(SocketChannel connection) {
        try (connection) {
            OutputStream out = new BufferedOutputStream(Channels.newOutputStream(connection), 65536);
            if (!connections.tryAcquire()) {
                Wire.write(out, Map.of("reply", reply(ToolResponse.failure(null,
                        "the runner is busy with other calls; try again in a moment"))));
                return;
            }
            try {
                answer(Channels.newInputStream(connection), out);
            } finally {
                connections.release();
            }
        } catch (IOException e) {
            LOG.debug("runner connection ended: {}", e.toString());
        }
    }

    private void answer(InputStream in, OutputStream out) throws IOException {
        Wire.Reader reader = new Wire.Reader(in, maxRequestBytes);
        Map<String, Object> request = reader.next();
        if (request == null) {
            return;
        }
        String op = request.get("op") instanceof String name ? name : "";
        switch (op) {
            case "ping" -> Wire.write(out, Map.of("pong", Map.of("failed", health.report().failed())));
            case "call" -> call(request, reader, out);
            default -> Wire.write(out, Map.of("reply", reply(ToolResponse.failure(null,
                    "the runner does not know the operation '" + op + "'"))));
        }
    }

    private void call(Map<String, Object> request, Wire.Reader reader, OutputStream out) throws IOException {
        if (!(request.get("tool") instanceof String tool)
                || !(request.getOrDefault("arguments", Map.of()) instanceof Map<?, ?> rawArguments)) {
            Wire.write(out, Map.of("reply", reply(ToolResponse.failure(null, "malformed call"))));
            return;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> arguments = (Map<String, Object>) rawArguments;
        // The server closes the connection to cancel: an end of stream before the reply
        // interrupts the call, and an interrupted command has its whole tree killed.
        // (The watcher is never interrupted itself: that would close the channel under the reply.)
        Thread worker = Thread.currentThread();
        AtomicBoolean replied = new AtomicBoolean();
        Thread.ofVirtual().name("runner-cancel").start(() -> {
            try {
                reader.next();
            } catch (IOException ended) {
                // closed or broken: the same as an end of stream
            }
            if (!replied.get()) {
                worker.interrupt();
            }
        });
        Progress progress = (done, total, message) -> {
            Map<String, Object> update = new LinkedHashMap<>();
            update.put("done", done);
            update.put("total", total);
            update.put("message", message);
            try {
                Wire.write(out, Map.of("progress", update));
            } catch (IOException gone) {
                // the server went away; the watcher cancels the call
            }
        };
        ToolResponse response = tools.execute(tool, arguments, progress);
        replied.set(true);
        Thread.interrupted(); // a cancel that came too late to matter
        Wire.write(out, Map.of("reply", reply(response)));
    }

    static Map<String, Object> reply(ToolResponse response) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("error", response.error());
        reply.put("text", response.text());
        if (response.structured() != null) {
            reply.put("structured", response.structured());
        }
        if (response.exitCode() != null) {
            reply.put("exit_code", response.exitCode());
        }
        if (response.bytes() != null) {
            reply.put("bytes", response.bytes());
        }
        reply.put("timed_out", response.timedOut());
        return reply;
    }

    /** Stops accepting and removes the socket; calls in progress finish on their own. */
    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            LOG.debug("closing the runner socket: {}", e.toString());
        }
        acceptor.interrupt();
    }
}

package dev.sandboxmcp.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.SelectorManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps the connections open at once. A connection past the cap is answered as soon as it is
 * accepted, before any of its request is read, with {@code 503} and {@code Connection: close},
 * and closed: the client learns at once to come back later, and the server never holds more
 * than the cap's worth of sockets (20,500 slow connections had used up its file descriptors).
 *
 * <p>Jetty's own {@code NetworkConnectionLimit} stops accepting at the cap instead: connections
 * past it wait unanswered in the kernel's accept queue, and once that is full a client's connect
 * hangs until its own timeout, for a health check as much as for an attacker.
 */
final class ConnectionCap implements SelectorManager.AcceptListener {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionCap.class);
    private final int max;
    private final ByteBuffer refusal;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicBoolean refusing = new AtomicBoolean();

    ConnectionCap(int max) {
        this.max = max;
        byte[] body = JsonRpcErrors.bytes(null, Problem.tooManyConnections(max));
        byte[] head = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json;charset=utf-8\r\n"
                + "Content-Length: " + body.length + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        this.refusal = ByteBuffer.allocate(head.length + body.length).put(head).put(body).flip().asReadOnlyBuffer();
    }

    @Override
    public void onAccepting(SelectableChannel channel) {
        if (open.incrementAndGet() > max) {
            if (refusing.compareAndSet(false, true)) {
                LOG.warn("{} connections open, the most allowed (MCP_MAX_CONNECTIONS): new ones get 503", max);
            }
            // Jetty's accept then fails on the closed channel and calls onAcceptFailed.
            refuse((SocketChannel) channel);
        }
    }

    @Override
    public void onAcceptFailed(SelectableChannel channel, Throwable cause) {
        closed();
    }

    @Override
    public void onClosed(SelectableChannel channel) {
        closed();
    }

    private void closed() {
        if (open.decrementAndGet() < max && refusing.compareAndSet(true, false)) {
            LOG.info("fewer than {} connections open: accepting new ones again", max);
        }
    }

    /** Writes the refusal (a new socket's send buffer takes it whole) and closes; never blocks. */
    private void refuse(SocketChannel channel) {
        try (channel) {
            channel.write(refusal.duplicate());
            channel.shutdownOutput();
            // Take in what has already arrived of the request: closing with unread input would
            // send a reset, and a reset can destroy the answer before the client reads it.
            ByteBuffer sink = ByteBuffer.allocate(8192);
            for (int i = 0; i < 8 && channel.read(sink.clear()) > 0; i++) {
                // discard
            }
        } catch (IOException gone) {
            // the client left first: nothing to tell it
        }
    }
}

package dev.sandboxmcp.runner;

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

/**
 * A runner taken over by a command: it listens where the real one would and answers every
 * connection with whatever {@code behaviour} writes, after reading the request line.
 */
final class HostileRunner implements AutoCloseable {

    @FunctionalInterface
    interface Behaviour {
        void answer(InputStream in, OutputStream out) throws IOException, InterruptedException;
    }

    private final ServerSocketChannel listener;
    private final Thread acceptor;

    HostileRunner(Path socket, Behaviour behaviour) throws IOException {
        Files.deleteIfExists(socket);
        listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        acceptor = Thread.ofPlatform().daemon().start(() -> {
            while (true) {
                SocketChannel connection;
                try {
                    connection = listener.accept();
                } catch (IOException closed) {
                    return;
                }
                Thread.ofVirtual().start(() -> {
                    try (connection) {
                        InputStream in = Channels.newInputStream(connection);
                        while (in.read() != '\n') {
                            // the request line
                        }
                        behaviour.answer(in, Channels.newOutputStream(connection));
                    } catch (IOException | InterruptedException | RuntimeException ignored) {
                        // the server hung up
                    }
                });
            }
        });
    }

    /** A runner whose listener exists but never accepts: connections wait in its backlog. */
    static ServerSocketChannel frozen(Path socket) throws IOException {
        Files.deleteIfExists(socket);
        ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket), 1);
        return listener;
    }

    static void writeLine(OutputStream out, String line) throws IOException {
        out.write((line + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        out.flush();
    }

    @Override
    public void close() throws IOException {
        listener.close();
        acceptor.interrupt();
    }
}

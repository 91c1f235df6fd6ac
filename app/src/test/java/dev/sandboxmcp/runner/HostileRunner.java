package dev.sandboxmcp.runner;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A stand-in for the runner's side that knows the secret (it read the ticket, as a runner does)
 * and answers every message from the server with whatever {@code behaviour} writes: the worst a
 * runner taken over could send. It holds the runner's lock as a runner's init does (a shared
 * flock), and connects again whenever the server closes the connection.
 */
final class HostileRunner implements AutoCloseable {

    /** Answers one message of the server ({@code kind} call or ping, with its id); runs on a thread of its own. */
    @FunctionalInterface
    interface Behaviour {
        void answer(String kind, long id, OutputStream out) throws IOException, InterruptedException;
    }

    private static final Pattern KIND = Pattern.compile("\"kind\":\"(\\w+)\"");
    private static final Pattern ID = Pattern.compile("\"id\":(\\d+)");

    private final Path socket;
    private final Flock.Held lock;
    private final Thread connector;
    private volatile Behaviour behaviour;
    private volatile UnaryOperator<String> hello;
    private final List<String> answers = new CopyOnWriteArrayList<>();
    private volatile SocketChannel current;
    private volatile boolean closed;
    private volatile boolean connected;

    /** Reads the ticket in the socket's directory (waiting for it), takes the lock, and connects. */
    HostileRunner(Path socket, Behaviour behaviour) throws IOException, InterruptedException {
        this(socket, behaviour, HostileRunner::hello);
    }

    /** As above, saying {@code hello} (given the secret) first. */
    HostileRunner(Path socket, Behaviour behaviour, UnaryOperator<String> hello) throws IOException, InterruptedException {
        this.socket = socket;
        this.behaviour = behaviour;
        this.hello = hello;
        Path directory = socket.getParent();
        Path ticket = directory.resolve(TicketOffice.TICKET);
        for (int i = 0; i < 600 && !Files.exists(ticket); i++) {
            Thread.sleep(50);
        }
        String secret = Files.readString(ticket).strip();
        this.lock = Flock.holdShared(directory.resolve(TicketOffice.LOCK));
        this.connector = Thread.ofPlatform().daemon().start(() -> connectLoop(secret));
    }

    /** Waits until the server has welcomed this stand-in again (it connects again after each close). */
    void awaitConnected() throws InterruptedException {
        for (int i = 0; i < 200 && !connected; i++) {
            Thread.sleep(25);
        }
        if (!connected) {
            throw new AssertionError("the stand-in did not get back in");
        }
    }

    void behave(Behaviour next) {
        behaviour = next;
    }

    /** The hello a runner sends, with the secret of this start. */
    static String hello(String secret) {
        return "{\"kind\":\"hello\",\"version\":1,\"secret\":\"" + secret + "\"}";
    }

    /** Sends {@code next}'s line (given the secret) as its hello from the next connection on. */
    void sayHello(UnaryOperator<String> next) {
        hello = next;
    }

    /** The server's answer to each hello so far (a welcome or a refusal), oldest first. */
    List<String> answers() {
        return List.copyOf(answers);
    }

    private void connectLoop(String secret) {
        while (!closed) {
            try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel.connect(UnixDomainSocketAddress.of(socket));
                current = channel;
                OutputStream out = Channels.newOutputStream(channel);
                InputStream in = Channels.newInputStream(channel);
                writeLine(out, hello.apply(secret));
                String welcome = readLine(in);
                if (welcome != null) {
                    answers.add(welcome);
                }
                if (welcome == null || !welcome.contains("welcome")) {
                    throw new IOException("not welcomed: " + welcome);
                }
                connected = true;
                for (String line = readLine(in); line != null; line = readLine(in)) {
                    Matcher kind = KIND.matcher(line);
                    Matcher id = ID.matcher(line);
                    if (kind.find() && id.find() && !kind.group(1).equals("cancel")) {
                        String k = kind.group(1);
                        long n = Long.parseLong(id.group(1));
                        Behaviour now = behaviour;
                        Thread.ofVirtual().start(() -> {
                            try {
                                now.answer(k, n, out);
                            } catch (IOException | InterruptedException | RuntimeException ignored) {
                                // the server hung up
                            }
                        });
                    }
                }
            } catch (IOException e) {
                // closed by the server; connect again
            }
            connected = false;
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                return null;
            }
            line.append((char) b);
        }
        return line.toString();
    }

    static void writeLine(OutputStream out, String line) throws IOException {
        synchronized (out) {
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        connector.interrupt();
        SocketChannel channel = current;
        if (channel != null) {
            channel.close();
        }
        lock.close();
    }
}

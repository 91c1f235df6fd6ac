package dev.sandboxmcp.runner;

import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.tools.ToolExecutor;
import dev.sandboxmcp.tools.ToolResponse;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runner's end of the channel: connects out to the server's socket, proves itself with the
 * secret of this start, and carries out the calls that come over that one connection, each on a
 * thread of its own, at most {@code maxCalls} at once (past that a call is answered "busy"). A
 * {@link Protocol.Cancel} interrupts its call, which kills a command's whole tree. When the
 * connection ends, the calls in flight are cancelled and the runner connects again with the
 * same secret; a server that refuses it (it restarted, so it no longer knows the secret) makes
 * the runner exit, and its container restarts with a new ticket.
 */
public final class RunnerAgent implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RunnerAgent.class);
    private static final Duration RETRY = Duration.ofMillis(200);

    private final UnixDomainSocketAddress address;
    private final Secret secret;
    private final ToolExecutor tools;
    private final HealthProbe health;
    private final Bounds serverSends;
    private final int maxCalls;
    private final Runnable refused;
    private final Map<Long, Thread> inFlight = new ConcurrentHashMap<>();
    private volatile Peer peer;
    private volatile boolean closed;

    private RunnerAgent(Path socket, Secret secret, ToolExecutor tools, HealthProbe health, Bounds serverSends, int maxCalls,
            Runnable refused) {
        this.address = UnixDomainSocketAddress.of(socket);
        this.secret = secret;
        this.tools = tools;
        this.health = health;
        this.serverSends = serverSends;
        this.maxCalls = maxCalls;
        this.refused = refused;
    }

    /** Connects to {@code socket} and serves from a thread of its own; {@code refused} runs when the server refuses. */
    public static RunnerAgent start(Path socket, Secret secret, ToolExecutor tools, HealthProbe health,
            Bounds serverSends, int maxCalls, Runnable refused) {
        RunnerAgent agent = new RunnerAgent(socket, secret, tools, health, serverSends, maxCalls, refused);
        Thread.ofPlatform().name("runner-channel").start(agent::run);
        return agent;
    }

    /** Reads the secret as {@link Secret#hex} wrote it (a ticket, or the first line from the parent). */
    public static Secret secret(String hex) throws IOException {
        try {
            return Secret.fromHex(hex.strip());
        } catch (Protocol.Violation e) {
            throw new IOException("the runner's secret is unreadable: " + e.getMessage());
        }
    }

    private void run() {
        boolean logged = false;
        while (!closed) {
            SocketChannel channel;
            try {
                channel = SocketChannel.open(StandardProtocolFamily.UNIX);
                channel.connect(address);
            } catch (IOException e) {
                if (!logged) {
                    LOG.info("waiting for the server's channel at {} ({})", address.getPath(), e.getMessage());
                    logged = true;
                }
                pause();
                continue;
            }
            logged = false;
            Peer current = new Peer(channel, Protocol.Sender.SERVER, ChannelListener.HELLO);
            peer = current;
            try {
                current.send(new Protocol.Hello(Protocol.VERSION, secret));
                Protocol.Message answer = current.receive(Protocol.Phase.HELLO);
                if (answer instanceof Protocol.Refused refusal) {
                    LOG.error("the server refused this runner: {}; exiting", refusal.reason());
                    closed = true;
                    refused.run();
                    return;
                }
                if (!(answer instanceof Protocol.Welcome)) {
                    throw new IOException("the connection ended before the server's answer to the hello");
                }
                current.bound(serverSends);
                LOG.info("connected to the server");
                serve(current);
            } catch (IOException | Protocol.Violation e) {
                if (!closed) {
                    LOG.warn("the channel to the server ended: {}", e.getMessage());
                }
            } finally {
                current.close();
                inFlight.values().forEach(Thread::interrupt); // nobody is left to read their answers
            }
            pause();
        }
    }

    private void serve(Peer current) throws IOException, Protocol.Violation {
        while (true) {
            Protocol.Message message = current.receive(Protocol.Phase.ESTABLISHED);
            switch (message) {
                case null -> throw new IOException("the server closed the connection");
                case Protocol.Call call -> start(current, call);
                case Protocol.Cancel cancel -> {
                    Thread worker = inFlight.get(cancel.id());
                    if (worker != null) {
                        worker.interrupt();
                    }
                }
                case Protocol.Ping ping -> Thread.ofVirtual().name("runner-ping").start(
                        () -> current.send(new Protocol.Pong(ping.id(), health.report().failed())));
                default -> throw new Protocol.Violation("the table lets the server send only call, cancel and ping");
            }
        }
    }

    private void start(Peer current, Protocol.Call call) {
        if (inFlight.size() >= maxCalls) {
            current.send(reply(call.id(), ToolResponse.failure(null, "the runner is busy with other calls; try again in a "
                    + "moment")));
            return;
        }
        Thread worker = Thread.ofVirtual().name("runner-call").unstarted(() -> {
            ToolResponse response;
            try {
                response = tools.execute(call.tool(), call.arguments(), (done, total, text) ->
                        current.send(new Protocol.Progress(call.id(), done, total, text.length() <= Protocol.REASON_CHARS
                                ? text : text.substring(0, Protocol.REASON_CHARS - 3) + "...")));
            } catch (RuntimeException e) {
                LOG.error("tool {} failed unexpectedly", call.tool(), e);
                response = ToolResponse.failure(null, "internal error in the runner (" + e.getClass().getSimpleName()
                        + "); the runner logged the details");
            } finally {
                inFlight.remove(call.id());
            }
            try {
                current.send(reply(call.id(), response));
            } catch (IllegalArgumentException notJson) {
                LOG.error("tool {} returned a result that is not JSON: {}", call.tool(), notJson.getMessage());
                current.send(reply(call.id(), ToolResponse.failure(null, "internal error in the runner (a result that is "
                        + "not JSON); the runner logged the details")));
            }
        });
        if (inFlight.putIfAbsent(call.id(), worker) != null) {
            current.send(reply(call.id(), ToolResponse.failure(null, "a call with this id is already running")));
            return;
        }
        worker.start();
    }

    static Protocol.Reply reply(long id, ToolResponse response) {
        return new Protocol.Reply(id, response.error(), response.text(), response.error() ? null : response.structured(),
                response.exitCode(), response.bytes(), response.timedOut());
    }

    private void pause() {
        try {
            Thread.sleep(RETRY);
        } catch (InterruptedException e) {
            closed = true;
        }
    }

    /** Stops connecting; calls in flight are interrupted with the connection. */
    @Override
    public void close() {
        closed = true;
        Peer current = peer;
        if (current != null) {
            current.close();
        }
    }
}

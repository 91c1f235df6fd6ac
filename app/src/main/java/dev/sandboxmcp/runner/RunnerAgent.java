package dev.sandboxmcp.runner;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.ToolExecutor;
import dev.sandboxmcp.tools.ToolResponse;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runner's end of the channel: connects out to the server's socket, proves itself with the
 * secret of this start, builds its tools from the limits the server's welcome states (before any
 * call; the runner has no limits of its own), and carries out the calls that come over that one
 * connection, each on a thread of its own (the one that read it), at most {@code maxCalls} at once
 * (past that a call is answered "busy"). A {@link Protocol.Cancel} interrupts its call, which kills a command's whole
 * tree. When the connection ends, the calls in flight are cancelled and the runner connects again
 * with the same secret; a server that refuses it (it restarted, so it no longer knows the secret)
 * makes the runner exit, and its container restarts with a new ticket.
 */
public final class RunnerAgent implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RunnerAgent.class);
    private static final Duration RETRY = Duration.ofMillis(200);
    /** An answer whose text is this long (its line a few times as long) is a large one ({@link #largeAnswers}). */
    static final int LARGE_ANSWER_CHARS = 32 * 1024;
    /** A welcome is a line of a kilobyte or so: the limits, each a name and a number. */
    static final Bounds WELCOME = new Bounds(16 * 1024, 4 * Protocol.MAX_LIMITS, 4, 256);

    private final UnixDomainSocketAddress address;
    private final Secret secret;
    private final Function<Limits, Service> setUp;
    private final int maxCalls;
    private final Runnable refused;
    /**
     * Where the threads that read and carry out calls come from: pooled platform threads, and a
     * virtual thread of its own for a call no pooled thread can take. A test replaces them to
     * refuse threads as the JVM does at the pids limit.
     */
    static volatile ThreadFactory pooledThreads = Thread.ofPlatform().name("runner-call-", 0).daemon().factory();
    static volatile ThreadFactory ownThreads = Thread.ofVirtual().name("runner-call").factory();

    private final Map<Long, Running> inFlight = new ConcurrentHashMap<>();
    /**
     * One large answer encoded and written at a time: a read_file page with a limit is a line of
     * up to 2 MiB with the default limits (its text twice, each at most the file limit as JSON
     * escapes it; {@code Bounds.maxReplyBytes}), and its encoding takes three times that at its
     * peak; many at once would exhaust the runner's heap (a tenth of its container's memory), and
     * the runner would exit with every command it runs.
     */
    private final Semaphore largeAnswers = new Semaphore(1);
    /** Platform threads: a call is carried out by the thread that read it (see {@link #read}). */
    private final ThreadPoolExecutor readers;
    private volatile Peer peer;
    private Service service; // and servedLimits: set once, under this object's lock
    private Limits servedLimits;
    /** The longest answer the server reads from this runner ({@link Bounds#maxReplyBytes} of the served limits). */
    private volatile int replyBytes = Integer.MAX_VALUE;
    private volatile boolean closed;

    /**
     * What the runner serves with, built once from the limits of the server's first welcome.
     *
     * @param tools       what carries out the calls
     * @param health      the checks a ping runs
     * @param serverSends what the runner accepts in one message from the server
     * @param resources   closed with the agent (commands, jobs)
     */
    public record Service(ToolExecutor tools, HealthProbe health, Bounds serverSends, AutoCloseable resources) {
    }

    private RunnerAgent(Path socket, Secret secret, Function<Limits, Service> setUp, int maxCalls, Runnable refused) {
        this.address = UnixDomainSocketAddress.of(socket);
        this.secret = secret;
        this.setUp = setUp;
        this.maxCalls = maxCalls;
        this.refused = refused;
        this.readers = new ThreadPoolExecutor(0, maxCalls + 1, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                body -> pooledThreads.newThread(body));
    }

    /**
     * Connects to {@code socket} and serves from a thread of its own, with what {@code setUp}
     * builds from the limits of the first welcome; {@code refused} runs when the server refuses
     * this runner, or states other limits than it first did.
     */
    public static RunnerAgent start(Path socket, Secret secret, Function<Limits, Service> setUp, int maxCalls,
            Runnable refused) {
        RunnerAgent agent = new RunnerAgent(socket, secret, setUp, maxCalls, refused);
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
            Peer current = new Peer(channel, Protocol.Sender.SERVER, WELCOME);
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
                if (!(answer instanceof Protocol.Welcome welcome)) {
                    throw new IOException("the connection ended before the server's answer to the hello");
                }
                Service serving = serviceFor(welcome.limits());
                if (serving == null) {
                    closed = true;
                    refused.run();
                    return;
                }
                current.bound(serving.serverSends());
                LOG.info("connected to the server");
                serve(current, serving);
            } catch (IOException | Protocol.Violation e) {
                if (!closed) {
                    LOG.warn("the channel to the server ended: {}", e.getMessage());
                }
            } finally {
                current.close();
                inFlight.values().forEach(Running::cancel); // nobody is left to read their answers
            }
            pause();
        }
    }

    /**
     * What serves under {@code limits}: built at the first welcome; a later welcome (a reconnect to
     * the same server) must state the same limits. Null when it cannot be served.
     */
    private synchronized Service serviceFor(Limits limits) {
        if (closed) {
            return null;
        }
        if (service == null) {
            try {
                service = setUp.apply(limits);
                servedLimits = limits;
                replyBytes = Bounds.maxReplyBytes(limits);
            } catch (RuntimeException e) {
                LOG.error("the runner could not set up under the server's limits; exiting", e);
                return null;
            }
        } else if (!limits.equals(servedLimits)) {
            LOG.error("the server stated other limits than at this runner's first connection; exiting so that it "
                    + "starts again under them");
            return null;
        }
        return service;
    }

    /**
     * Serves calls over {@code current} until it ends; throws why it ended. The reading is done by
     * other threads: this one waits for the end, to cancel what is left at once and connect again.
     */
    private void serve(Peer current, Service serving) throws IOException, Protocol.Violation {
        CompletableFuture<Exception> ended = new CompletableFuture<>();
        Runnable reading = () -> read(current, serving, ended);
        if (!handOff(reading)) {
            try {
                ownThreads.newThread(reading).start();
            } catch (OutOfMemoryError noThread) {
                throw new IOException("no thread could be started to read the channel (the process limit is full)");
            }
        }
        switch (ended.join()) {
            case IOException e -> throw e;
            case Protocol.Violation e -> throw e;
            case Exception e -> throw new IOException(e);
        }
    }

    /**
     * Reads the server's messages until the connection ends, then completes {@code ended} with
     * why. A call is carried out by the thread that read it, once that thread has handed the
     * reading on to another: the call's path has no hand-off between threads. Only when no thread
     * can take the reading over (all busy, or none can be made) does the call get a thread of its own.
     */
    private void read(Peer current, Service serving, CompletableFuture<Exception> ended) {
        Protocol.Call mine = null;
        Running running = null;
        try {
            while (mine == null) {
                Protocol.Message message = current.receive(Protocol.Phase.ESTABLISHED);
                switch (message) {
                    case null -> throw new IOException("the server closed the connection");
                    case Protocol.Call call -> {
                        Running admitted = admit(current, call);
                        if (admitted == null) {
                            continue;
                        }
                        if (handOff(() -> read(current, serving, ended))) {
                            mine = call;
                            running = admitted;
                        } else {
                            ownThread(current, call, admitted, serving.tools());
                        }
                    }
                    case Protocol.Cancel cancel -> {
                        Running cancelled = inFlight.get(cancel.id());
                        if (cancelled != null) {
                            cancelled.cancel();
                        }
                    }
                    case Protocol.Ping ping -> answer(current, ping, serving.health());
                    default -> throw new Protocol.Violation("the table lets the server send only call, cancel and ping");
                }
            }
        } catch (IOException | Protocol.Violation e) {
            ended.complete(e);
            return;
        } catch (RuntimeException | Error e) {
            ended.complete(new IOException("reading the channel failed: " + e));
            throw e;
        }
        carryOut(current, mine, running, serving.tools());
    }

    /** Answers {@code ping} from a thread of its own; when none can start, not at all (the server counts that unhealthy). */
    private static void answer(Peer current, Protocol.Ping ping, HealthProbe health) {
        try {
            Thread.ofVirtual().name("runner-ping").start(() -> current.send(new Protocol.Pong(ping.id(),
                    health.report().failed())));
        } catch (OutOfMemoryError noThread) {
            LOG.warn("a ping went unanswered: no thread could be started for its checks");
        }
    }

    /** Another thread reads from now on; false when none can (the call then gets a thread of its own). */
    private boolean handOff(Runnable reading) {
        try {
            readers.execute(reading);
            return true;
        } catch (RejectedExecutionException | OutOfMemoryError noThread) { // the pids limit full: no new thread
            return false;
        }
    }

    /** Carries {@code call} out on a thread of its own; when none can be started, answers it so and forgets it. */
    private void ownThread(Peer current, Protocol.Call call, Running running, ToolExecutor tools) {
        try {
            ownThreads.newThread(() -> carryOut(current, call, running, tools)).start();
        } catch (OutOfMemoryError noThread) {
            inFlight.remove(call.id(), running);
            current.send(reply(call.id(), ToolResponse.failure(null, "the runner could not start a thread for the call "
                    + "(its process limit is full: a command may be forking without end); stop such a job, or try again "
                    + "when fewer processes run")));
        }
    }

    /** {@code call} counted in flight; null when it was answered at once instead (busy, or its id is taken). */
    private Running admit(Peer current, Protocol.Call call) {
        if (inFlight.size() >= maxCalls) {
            current.send(reply(call.id(), ToolResponse.failure(null, "the runner is busy with other calls; try again in a "
                    + "moment")));
            return null;
        }
        Running running = new Running();
        if (inFlight.putIfAbsent(call.id(), running) != null) {
            current.send(reply(call.id(), ToolResponse.failure(null, "a call with this id is already running")));
            return null;
        }
        return running;
    }

    private void carryOut(Peer current, Protocol.Call call, Running running, ToolExecutor tools) {
        running.begin();
        ToolResponse response;
        try {
            response = tools.execute(call.tool(), call.arguments(), progressOf(current, call));
        } catch (RuntimeException e) {
            LOG.error("tool {} failed unexpectedly", call.tool(), e);
            response = ToolResponse.failure(null, "internal error in the runner (" + e.getClass().getSimpleName()
                    + "); the runner logged the details");
        } finally {
            running.end();
            inFlight.remove(call.id(), running);
        }
        try {
            // Ended: no cancel interrupts this thread now.
            if (response.text() == null || response.text().length() < LARGE_ANSWER_CHARS) {
                current.sendNow(withinBound(call, Protocol.encode(reply(call.id(), response)), replyBytes));
            } else {
                largeAnswers.acquireUninterruptibly();
                try {
                    current.sendWhole(withinBound(call, Protocol.encode(reply(call.id(), response)), replyBytes));
                } finally {
                    largeAnswers.release();
                }
            }
        } catch (IllegalArgumentException notJson) {
            LOG.error("tool {} returned a result that is not JSON: {}", call.tool(), notJson.getMessage());
            current.send(reply(call.id(), ToolResponse.failure(null, "internal error in the runner (a result that is "
                    + "not JSON); the runner logged the details")));
        }
    }

    /**
     * A call in flight, as its cancel reaches it: the thread carrying it out is interrupted only
     * while it does (a pooled thread goes on to other calls and must not get this call's interrupt).
     */
    private static final class Running {
        private Thread thread;
        private boolean cancelled;
        private boolean ended;

        synchronized void begin() {
            thread = Thread.currentThread();
            if (cancelled) {
                thread.interrupt();
            }
        }

        synchronized void cancel() {
            cancelled = true;
            if (thread != null && !ended) {
                thread.interrupt();
            }
        }

        /** The call is over; an interrupt its cancel left on this thread is cleared. */
        synchronized void end() {
            ended = true;
            Thread.interrupted();
        }
    }

    /** Progress over the channel when the client listens for it, else none (no ticker starts for nobody). */
    private static Progress progressOf(Peer current, Protocol.Call call) {
        if (!call.progress()) {
            return Progress.NONE;
        }
        return (done, total, text) -> current.send(new Protocol.Progress(call.id(), done, total,
                text.length() <= Protocol.REASON_CHARS ? text : text.substring(0, Protocol.REASON_CHARS - 3) + "..."));
    }

    /**
     * {@code line}, or a tool error in its place when it is longer than the server reads: the
     * server would take it for a violation and close the channel with every call in flight. Pages
     * and listings stay within the bound ({@code LargestRepliesTest}); this is the last guard.
     */
    static byte[] withinBound(Protocol.Call call, byte[] line, int maxBytes) {
        if (line.length - 1 <= maxBytes) {
            return line;
        }
        LOG.warn("tool {} returned a result of {} bytes as JSON, over the channel's {}", call.tool(), line.length - 1,
                maxBytes);
        return Protocol.encode(reply(call.id(), ToolResponse.failure(null, "the result is " + (line.length - 1)
                + " bytes as JSON, more than the " + maxBytes + " the runner may send the server; ask for less")));
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

    /** Stops connecting; calls in flight are interrupted with the connection, and what served them is closed. */
    @Override
    public void close() {
        Service built;
        synchronized (this) {
            closed = true;
            built = service;
        }
        Peer current = peer;
        if (current != null) {
            current.close();
        }
        readers.shutdown();
        if (built != null) {
            try {
                built.resources().close();
            } catch (Exception e) {
                LOG.warn("closing the runner's commands and jobs: {}", e.toString());
            }
        }
    }
}

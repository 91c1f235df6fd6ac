package dev.sandboxmcp.runner;

import dev.sandboxmcp.tools.CallCancellation;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.ToolExecutor;
import dev.sandboxmcp.tools.ToolResponse;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's end of the channel: carries a validated call to the runner and turns what comes
 * back into a tool result. The runner is untrusted: every line is bounded
 * ({@code maxReplyBytes}), the whole exchange has a deadline (connecting included, since a
 * frozen runner's backlog blocks a connect), and every field is checked; whatever goes wrong
 * becomes a tool error that says what to do, and the connection is closed, which the runner
 * takes as a cancel.
 */
public final class RunnerClient implements ToolExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(RunnerClient.class);
    private static final int MAX_PROGRESS_MESSAGE = 200;

    private final UnixDomainSocketAddress address;
    private final int maxReplyBytes;
    private final BiFunction<String, Map<String, Object>, Duration> deadlines;
    private final ScheduledExecutorService closer = Executors.newSingleThreadScheduledExecutor(
            task -> Thread.ofPlatform().name("runner-deadline").daemon().unstarted(task));

    /**
     * @param deadlines how long a call of a tool with given arguments may take, all told
     */
    public RunnerClient(Path socket, int maxReplyBytes,
            BiFunction<String, Map<String, Object>, Duration> deadlines) {
        this.address = UnixDomainSocketAddress.of(socket);
        this.maxReplyBytes = maxReplyBytes;
        this.deadlines = deadlines;
    }

    /** What the runner's own health checks found: the names of those that failed. */
    public sealed interface Health {
        record Answered(List<String> failed) implements Health {
        }

        record Unreachable(String why) implements Health {
        }
    }

    @Override
    public ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress) {
        return execute(tool, arguments, progress, CallCancellation.NEVER);
    }

    /**
     * As above; when the client cancels the call, the connection is closed, which the runner
     * takes as a cancel: a command's whole tree is killed.
     */
    @Override
    public ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress,
            CallCancellation cancellation) {
        String target = ToolResponse.describeTarget(arguments);
        Duration deadline = deadlines.apply(tool, arguments);
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("op", "call");
        request.put("tool", tool);
        request.put("arguments", arguments);
        try {
            Map<String, Object> reply = exchange(request, deadline, progress, cancellation);
            return parseReply(reply.get("reply"), target);
        } catch (Unanswered e) {
            if (!cancellation.cancelled()) { // a cancel is the client's doing, logged where it arrives
                LOG.warn("runner call {} failed: {}", tool, e.getMessage());
            }
            return ToolResponse.failure(target, e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("runner call {} failed unexpectedly", tool, e);
            return ToolResponse.failure(target, "internal error while calling the runner (" + e.getClass().getSimpleName()
                    + "); the server logged the details");
        }
    }

    /** Asks the runner to run its health checks, within {@code deadline}. */
    public Health ping(Duration deadline) {
        try {
            Map<String, Object> answer = exchange(Map.of("op", "ping"), deadline, Progress.NONE, CallCancellation.NEVER);
            if (answer.get("pong") instanceof Map<?, ?> pong && pong.get("failed") instanceof List<?> failed
                    && failed.size() <= 16 && failed.stream().allMatch(n -> n instanceof String s && s.length() <= 64)) {
                return new Health.Answered(failed.stream().map(String.class::cast).toList());
            }
            return new Health.Unreachable("the runner answered the ping with something else");
        } catch (Unanswered e) {
            return new Health.Unreachable(e.getMessage());
        }
    }

    /** The call could not be carried out; the message says why and what to do. */
    private static final class Unanswered extends Exception {
        Unanswered(String message) {
            super(message);
        }
    }

    /** Sends {@code request} and returns the first line that is not progress. */
    private Map<String, Object> exchange(Map<String, Object> request, Duration deadline, Progress progress,
            CallCancellation cancellation) throws Unanswered {
        SocketChannel channel;
        try {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        } catch (IOException e) {
            throw new Unanswered("the server could not open a socket to its runner: " + e.getMessage());
        }
        AtomicBoolean expired = new AtomicBoolean();
        ScheduledFuture<?> timer = closer.schedule(() -> {
            expired.set(true);
            closeQuietly(channel);
        }, deadline.toNanos(), TimeUnit.NANOSECONDS);
        cancellation.onCancel(why -> closeQuietly(channel));
        try (channel) {
            try {
                channel.connect(address);
            } catch (IOException e) {
                if (cancellation.cancelled()) {
                    throw new Unanswered("cancelled (" + cancellation.reason() + ") before it reached the runner");
                }
                throw new Unanswered(expired.get() ? unresponsive(deadline) : "the runner is not running (it may be "
                        + "restarting after a crash, which takes a few seconds); try again shortly");
            }
            OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 65536);
            Wire.Reader reader = new Wire.Reader(Channels.newInputStream(channel), maxReplyBytes);
            try {
                Wire.write(out, request);
                while (true) {
                    Map<String, Object> line = reader.next();
                    if (line == null) {
                        throw new Unanswered("the runner stopped before it answered (a command may have killed it; "
                                + "it is restarted within seconds); the call's outcome is unknown. Check with list_jobs "
                                + "or read the files before repeating it");
                    }
                    if (!line.containsKey("progress")) {
                        return line;
                    }
                    forward(line.get("progress"), progress);
                }
            } catch (Wire.FrameException e) {
                throw new Unanswered(broken("it sent " + e.getMessage()));
            } catch (IOException e) {
                if (cancellation.cancelled()) {
                    throw new Unanswered("cancelled (" + cancellation.reason() + "); a command and everything it "
                            + "started were killed");
                }
                String what = e instanceof ClosedChannelException ? "the connection was closed" : e.getMessage();
                throw new Unanswered(expired.get() ? unresponsive(deadline) : broken(what));
            }
        } catch (IOException closing) {
            throw new Unanswered(broken(closing.getMessage()));
        } finally {
            timer.cancel(false);
        }
    }

    private static String unresponsive(Duration deadline) {
        return "the runner did not answer within " + deadline.toSeconds() + " s (it may be frozen or overloaded; its "
                + "health check restarts it); the call was abandoned. Try again shortly";
    }

    private static String broken(String what) {
        return "the runner broke the protocol (" + what + "); the call's outcome is unknown. Check with list_jobs "
                + "or read the files before repeating it";
    }

    private static void forward(Object update, Progress progress) {
        if (update instanceof Map<?, ?> p && p.get("done") instanceof Number done) {
            Double total = p.get("total") instanceof Number t ? t.doubleValue() : null;
            String message = p.get("message") instanceof String m
                    ? m.substring(0, Math.min(m.length(), MAX_PROGRESS_MESSAGE)) : null;
            progress.report(done.doubleValue(), total, message);
        }
    }

    /** The reply as a tool result, checked field by field; the target comes from the call, never the runner. */
    private static ToolResponse parseReply(Object raw, String target) throws Unanswered {
        if (!(raw instanceof Map<?, ?> reply) || !(reply.get("error") instanceof Boolean error)
                || !(reply.get("text") instanceof String text)) {
            throw new Unanswered(broken("the reply lacks error or text"));
        }
        Object structured = reply.get("structured");
        if (structured != null && !(structured instanceof Map)) {
            throw new Unanswered(broken("the structured result is not an object"));
        }
        if (!error && structured == null) {
            throw new Unanswered(broken("a result without its structured content"));
        }
        Integer exitCode = reply.get("exit_code") instanceof Integer code ? code : null;
        Long bytes = reply.get("bytes") instanceof Number n && (n instanceof Integer || n instanceof Long)
                ? n.longValue() : null;
        boolean timedOut = Boolean.TRUE.equals(reply.get("timed_out"));
        @SuppressWarnings("unchecked")
        Map<String, Object> content = error ? null : (Map<String, Object>) structured;
        return new ToolResponse(error, text, content, target, exitCode, bytes, timedOut);
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing to end a call that ran out of time
        }
    }
}

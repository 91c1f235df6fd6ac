package dev.sandboxmcp.runner;

import dev.sandboxmcp.tools.CallCancellation;
import dev.sandboxmcp.tools.HeapBudget;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.ToolExecutor;
import dev.sandboxmcp.tools.ToolResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's end of the channel: carries every call over the one connection of the runner
 * that proved itself, multiplexed by id, and turns what comes back into tool results. The runner
 * is untrusted: each line is parsed within {@link Bounds} and checked by its record in
 * {@link Protocol}; every call has a deadline; a client's cancel takes the call's line back if it
 * is still queued here, else it is a {@link Protocol.Cancel}; a
 * runner that goes away or breaks the protocol fails its calls in flight with a clear error, and
 * the next runner that proves itself carries the calls after it.
 */
public final class RunnerLink implements ToolExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(RunnerLink.class);
    /**
     * Heap an answer costs the server per byte of its line, at the most: its strings once parsed
     * (at most the line's bytes), and the SDK's writing of the result (four: a segmented buffer of
     * UTF-16 chars, the string it is copied into and its copy: {@code AnswerCostTest} measures it).
     */
    static final int ANSWER_COST_PER_BYTE = 5;
    /**
     * Lines up to this long hold none of the budget: with at most a call in flight per runner
     * connection slot ({@code Main.RUNNER_CONNECTIONS}, 64) they cost the server 20 MiB at most, out
     * of its own half of the heap, and a budget full of bodies refuses no small answer.
     */
    static final int HELD_FROM = 64 * 1024;
    private static final HeapBudget.Hold NO_HOLD = () -> { };

    private final Bounds runnerReads;
    private final HeapBudget budget;
    private final BiFunction<String, Map<String, Object>, Duration> deadlines;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
    private final BriefSpin spin = BriefSpin.forThisMachine();
    private volatile Peer peer;
    private volatile Runnable onConnectionChange = () -> { };

    /** What the runner's own health checks found: the names of those that failed. */
    public sealed interface Health {
        record Answered(List<String> failed) implements Health {
        }

        record Unreachable(String why) implements Health {
        }
    }

    /** What came back for a call: the message, and the room its line holds in the server's heap. */
    private record Answer(Protocol.Message message, HeapBudget.Hold hold) {
    }

    /** A call or ping waiting for its answer on {@code peer}; {@code line} is what was queued for it. */
    private static final class Pending {
        final Peer peer;
        final byte[] line;
        final CompletableFuture<Answer> answer = new CompletableFuture<>();
        final ProgressRelay progress;
        /** Whether {@link #checkSent} found the line sent; under this call's lock, as its registration is. */
        private boolean seenSent;

        Pending(Peer peer, byte[] line, ProgressRelay progress) {
            this.peer = peer;
            this.line = line;
            this.progress = progress;
        }

        /**
         * Checks that the runner was sent this call before it speaks of it: ids are a count, so a
         * runner taken over could answer the next ones without reading, and each answered call's
         * line would stay queued here for good (nothing gives it up any more).
         */
        synchronized void checkSent(long id) throws Protocol.Violation { // after the line is queued (exchange)
            if (seenSent) {
                return;
            }
            if (peer.unsend(line)) {
                answer.completeExceptionally(new Unanswered(broken("it answered a call it had not been sent")));
                throw new Protocol.Violation("an answer or progress for call " + id + ", which it had not been sent");
            }
            seenSent = true;
        }
    }

    /** The call could not be carried out; the message says why and what to do. */
    private static final class Unanswered extends Exception {
        Unanswered(String message) {
            super(message);
        }
    }

    /**
     * @param runnerReads what the runner accepts in one message: a call that would break it is
     *                    refused here, as a tool error, rather than break the connection there
     * @param deadlines   how long a call of a tool with given arguments may take, all told
     * @param budget      the server's heap for messages in flight: each answer holds its cost
     *                    before it is read; one that finds no room fails its call
     */
    public RunnerLink(Bounds runnerReads, BiFunction<String, Map<String, Object>, Duration> deadlines,
            HeapBudget budget) {
        this.runnerReads = runnerReads;
        this.deadlines = deadlines;
        this.budget = budget;
    }

    /** As above, with no bound on the heap answers take (tests and benchmarks). */
    public RunnerLink(Bounds runnerReads, BiFunction<String, Map<String, Object>, Duration> deadlines) {
        this(runnerReads, deadlines, HeapBudget.UNBOUNDED);
    }

    /** Whether a runner that proved itself is connected. */
    public boolean connected() {
        Peer current = peer;
        return current != null && !current.closed();
    }

    /**
     * Runs {@code action} each time a runner's connection begins, and each time one ends (before
     * its calls in flight are failed): what was known of the runner before (its health) is stale.
     */
    public void onConnectionChange(Runnable action) {
        onConnectionChange = action;
    }

    /** Carries calls over {@code proven} from now on, reading its messages on this thread until it ends. */
    void serve(Peer proven) {
        Peer before = peer;
        peer = proven;
        if (before != null) {
            before.close();
        }
        onConnectionChange.run();
        String why;
        try {
            while (true) {
                if (!proven.nextLine()) {
                    why = "the runner stopped before it answered (a command may have killed it; it is restarted within "
                            + "seconds); the call's outcome is unknown. Check with list_jobs or read the files before "
                            + "repeating it";
                    break;
                }
                int length = proven.lineLength();
                HeapBudget.Hold hold = length < HELD_FROM ? NO_HOLD : budget.tryHold((long) ANSWER_COST_PER_BYTE * length);
                if (hold == null) {
                    fail(proven, proven.lineId(), tooLarge(length));
                    continue;
                }
                Protocol.Message message;
                try {
                    message = proven.decodeLine(Protocol.Phase.ESTABLISHED);
                } catch (Protocol.Violation e) {
                    hold.close();
                    throw e;
                }
                dispatch(proven, message, hold);
            }
        } catch (Protocol.Violation | IOException e) {
            LOG.warn("the runner broke the channel's protocol; closing its connection: {}", e.getMessage());
            why = broken("it sent " + e.getMessage());
        }
        if (peer == proven) {
            peer = null;
        }
        proven.close();
        onConnectionChange.run();
        for (Map.Entry<Long, Pending> entry : pending.entrySet()) {
            if (entry.getValue().peer == proven && pending.remove(entry.getKey(), entry.getValue())) {
                entry.getValue().answer.completeExceptionally(new Unanswered(why));
            }
        }
    }

    private void dispatch(Peer from, Protocol.Message message, HeapBudget.Hold hold) throws Protocol.Violation {
        switch (message) {
            case Protocol.Progress update -> {
                hold.close(); // the relay keeps a few reports of at most 200 chars
                Pending call = pending.get(update.id());
                if (call != null && call.peer == from) {
                    call.checkSent(update.id());
                    call.progress.offer(update);
                }
            }
            case Protocol.Reply reply -> complete(from, reply.id(), new Answer(reply, hold));
            case Protocol.Pong pong -> complete(from, pong.id(), new Answer(pong, hold));
            default -> throw new IllegalStateException("the table lets the runner send only progress, reply and pong");
        }
    }

    private void complete(Peer from, long id, Answer answer) throws Protocol.Violation {
        Pending call = take(from, id);
        if (call != null) {
            try {
                call.checkSent(id);
            } catch (Protocol.Violation e) {
                answer.hold().close();
                throw e;
            }
            call.answer.complete(answer);
        } else { // an answer after the call's deadline or cancel, to a call of an earlier connection, or to no call
            answer.hold().close();
        }
    }

    /** Fails the call {@code id} of {@code from}'s with {@code why}, its answer unread. */
    private void fail(Peer from, long id, String why) throws Protocol.Violation {
        Pending call = take(from, id);
        if (call != null) {
            call.checkSent(id);
            LOG.warn("call {}: {}", id, why);
            call.answer.completeExceptionally(new Unanswered(why));
        }
    }

    /**
     * The call {@code id} of {@code from}'s, removed from those waiting for an answer; null when it
     * is none (any more): its deadline or cancel came first, it is an earlier connection's, or no call.
     */
    private Pending take(Peer from, long id) {
        Pending call = pending.get(id);
        return call != null && call.peer == from && pending.remove(id, call) ? call : null;
    }

    @Override
    public ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress) {
        return execute(tool, arguments, progress, CallCancellation.NEVER);
    }

    /**
     * As above; a cancelled call is answered at once (once a progress report under way has gone out
     * to the client) and cancelled at the runner (its command tree is killed).
     */
    @Override
    public ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress,
            CallCancellation cancellation) {
        return execute(tool, arguments, progress, cancellation, HeapBudget.Hold::close);
    }

    /** As above; the room the answer holds in the server's heap goes to {@code keep} (see {@link ToolExecutor}). */
    @Override
    public ToolResponse execute(String tool, Map<String, Object> arguments, Progress progress,
            CallCancellation cancellation, Consumer<HeapBudget.Hold> keep) {
        long id = ids.incrementAndGet();
        byte[] line;
        try {
            line = Protocol.encode(new Protocol.Call(id, tool, arguments, progress != Progress.NONE), runnerReads);
        } catch (Protocol.Violation | IllegalArgumentException e) {
            return ToolResponse.failure(null, "the call's arguments are too large for the runner (" + e.getMessage()
                    + "); send less in one call");
        }
        Duration deadline = deadlines.apply(tool, arguments);
        try {
            AtomicBoolean cancelled = new AtomicBoolean();
            Answer answered = exchange(id, line, deadline, progress, cancellation, cancelled);
            keep.accept(answered.hold());
            Protocol.Message answer = answered.message();
            if (cancelled.get()) {
                return ToolResponse.failure(null, "cancelled (" + cancellation.reason() + "); a command and everything "
                        + "it started were killed");
            }
            if (!(answer instanceof Protocol.Reply reply)) {
                return ToolResponse.failure(null, broken("it answered a call with a " + answer.getClass().getSimpleName()));
            }
            return new ToolResponse(reply.error(), reply.text(), reply.error() ? null : reply.structured(), null,
                    reply.exitCode(), reply.bytes(), reply.timedOut());
        } catch (Unanswered e) {
            if (!cancellation.cancelled()) { // a cancel is the client's doing, logged where it arrives
                LOG.warn("runner call {} failed: {}", tool, e.getMessage());
            }
            return ToolResponse.failure(null, e.getMessage());
        }
    }

    /** Asks the runner to run its health checks, within {@code deadline}. */
    public Health ping(Duration deadline) {
        long id = ids.incrementAndGet();
        try {
            Answer answer = exchange(id, Protocol.encode(new Protocol.Ping(id)), deadline, Progress.NONE,
                    CallCancellation.NEVER, new AtomicBoolean());
            answer.hold().close();
            if (answer.message() instanceof Protocol.Pong pong) {
                return new Health.Answered(pong.failed());
            }
            return new Health.Unreachable("the runner answered the ping with something else");
        } catch (Unanswered e) {
            return new Health.Unreachable(e.getMessage());
        }
    }

    /** Sends {@code line} and waits for its answer; {@code cancelled} is set when a cancel went out before the answer came. */
    private Answer exchange(long id, byte[] line, Duration deadline, Progress progress,
            CallCancellation cancellation, AtomicBoolean cancelled) throws Unanswered {
        Peer current = peer;
        if (current == null || current.closed()) {
            throw new Unanswered("the runner is not connected (it may be restarting after a crash, which takes a few "
                    + "seconds); try again shortly");
        }
        Pending call = new Pending(current, line, ProgressRelay.to(progress));
        synchronized (call) { // an answer that comes before the line is queued waits for it (Pending.checkSent)
            pending.put(id, call);
            if (current.closed()) { // it ended between the look and the registration: its reader may have missed this call
                pending.remove(id);
                call.progress.close();
                throw new Unanswered("the runner's connection ended just now; try again shortly");
            }
            current.sendLine(line); // queued, never written here: a runner that stops reading must not hold this thread
        }
        if (cancellation != CallCancellation.NEVER) { // its callbacks would pile up, never to run
            cancellation.onCancel(why -> {
                // Answered at once, as the client asked; the runner kills the command tree on its own.
                // A cancel after the answer changes nothing.
                if (pending.remove(id, call)) {
                    cancelled.set(true);
                    withdraw(current, id, line);
                    call.answer.complete(new Answer(new Protocol.Cancel(id), NO_HOLD));
                }
            });
        }
        try {
            spin.await(call.answer, pending.size() == 1);
            return call.answer.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            pending.remove(id);
            giveBackIfAnswered(call);
            withdraw(current, id, line);
            throw new Unanswered(unresponsive(deadline));
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Unanswered unanswered ? unanswered : new Unanswered(broken(e.getCause().toString()));
        } catch (InterruptedException e) {
            pending.remove(id);
            giveBackIfAnswered(call);
            withdraw(current, id, line);
            Thread.currentThread().interrupt();
            throw new Unanswered("interrupted while waiting for the runner; the call was cancelled");
        } finally {
            call.progress.close();
        }
    }

    /** An answer that came as its call was given up holds its room until nobody waits for it: now. */
    private static void giveBackIfAnswered(Pending call) {
        call.answer.thenAccept(answer -> answer.hold().close());
    }

    /**
     * A call given up here: its line is taken back if it is still queued (a runner that stopped
     * reading would otherwise leave every abandoned call's line in this server's memory, and run
     * them all if it ever read again), else the runner is told to cancel it.
     */
    private static void withdraw(Peer peer, long id, byte[] line) {
        if (!peer.unsend(line)) {
            peer.send(new Protocol.Cancel(id));
        }
    }

    /** The bytes queued for the runner's connection and not yet written (0 with none). */
    long queuedBytes() {
        Peer current = peer;
        return current == null ? 0 : current.queuedBytes();
    }

    private static String unresponsive(Duration deadline) {
        return "the runner did not answer within " + deadline.toSeconds() + " s (it may be overloaded or stuck); the call "
                + "was cancelled. Check with list_jobs or read the files before repeating it";
    }

    private String tooLarge(int lineBytes) {
        return String.format(java.util.Locale.ROOT, "the runner's answer (%.1f MiB as JSON) does not fit in the server's "
                + "memory beside the other messages in flight (%d MiB for all of them); the call was carried out: check "
                + "its effects before repeating it, and ask for less at a time (a smaller page)", lineBytes / 1048576.0,
                budget.capacity() / 1048576);
    }

    private static String broken(String what) {
        return "the runner's answer was unusable (" + what + "); the server ignored it. The call's outcome is unknown: "
                + "check with list_jobs or read the files before repeating it";
    }
}

package dev.sandboxmcp.exec;

import dev.sandboxmcp.config.Limits;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Background jobs: commands that outlive one tool call (builds, servers, test suites), started as
 * jobs or handed over by a {@code run_command} still running at its call's budget. They belong to
 * the server, not to an MCP session, so they survive client reconnects. Their output is kept in
 * bounded logs. At most {@code maxRunning} started jobs run at once and {@code maxKept} jobs are
 * remembered (the oldest finished one is forgotten first); all are killed, whole process tree
 * included, on shutdown. The output of recent finished commands is kept here too, to be read by
 * offset like a job's.
 */
public final class JobManager implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);

    private final Map<String, String> environment;
    private final int logCapacity;
    private final Duration killGrace;
    private final int maxRunning;
    private final int maxKept;
    private final Map<String, Entry> jobs = new LinkedHashMap<>();
    private final int maxKeptOutputs;
    private final Map<String, Kept> kept = new LinkedHashMap<>();
    private final IdleSweep sweep;
    /** The started jobs not yet ended, readable without this lock, which a start holds while it spawns. */
    private final Set<RunningCommand> startedRunning = ConcurrentHashMap.newKeySet();
    private boolean closed;

    public JobManager(Map<String, String> environment, int logCapacity, Duration killGrace, int maxRunning, int maxKept) {
        this(environment, logCapacity, killGrace, maxRunning, maxKept, maxKept, IdleSweep.NONE);
    }

    /**
     * As above, keeping the output of the {@code maxKeptOutputs} most recent finished commands
     * handed to {@link #keep}; each job takes part in {@code sweep} until its process exits.
     */
    public JobManager(Map<String, String> environment, int logCapacity, Duration killGrace, int maxRunning, int maxKept,
            int maxKeptOutputs, IdleSweep sweep) {
        this.maxKeptOutputs = maxKeptOutputs;
        this.sweep = sweep;
        this.environment = Map.copyOf(environment);
        this.logCapacity = logCapacity;
        this.killGrace = killGrace;
        this.maxRunning = maxRunning;
        this.maxKept = maxKept;
    }

    /** The runner's: jobs under {@code limits}, each taking part in {@code sweep}. */
    public static JobManager under(Limits limits, Map<String, String> environment, IdleSweep sweep) {
        return new JobManager(environment, limits.jobLogBytes(), limits.killGrace(), limits.maxJobs(), limits.keptJobs(),
                limits.keptOutputs(), sweep);
    }

    /** Thrown when {@code maxRunning} jobs are running. */
    public static final class TooManyJobsException extends Exception {
        private final int limit;

        TooManyJobsException(int limit) {
            super(limit + " jobs are already running (the limit)");
            this.limit = limit;
        }

        /** How many jobs may run at once. */
        public int limit() {
            return limit;
        }
    }

    private final class Entry {
        final String id;
        final String command;
        final String cwd;
        final Instant started;
        final RunningCommand running;
        /** Handed over at its call's budget rather than started as a job. */
        final boolean adopted;
        /** Completed once the command has ended and all its output is in the logs. */
        final CompletableFuture<Ending> ending = new CompletableFuture<>();

        Entry(String id, String command, String cwd, RunningCommand running, boolean adopted) {
            this.id = id;
            this.command = command;
            this.cwd = cwd;
            this.running = running;
            this.adopted = adopted;
            this.started = Instant.now().minusNanos(System.nanoTime() - running.startedNanos());
        }

        boolean ended() {
            return ending.isDone();
        }

        Job snapshot() {
            Ending end = ending.getNow(null);
            return new Job(id, command, cwd, started, end == null ? running.elapsedMillis() : end.durationMillis(),
                    running.streams().values().stream().mapToLong(OutputLog::totalBytes).sum(), running.stopping(),
                    List.copyOf(running.streams().keySet()),
                    end == null && running.input() != null && running.input().open(), end);
        }

        /**
         * Waits for the command to end and ends it. A job started as one ends when its shell has
         * exited and its output pipe is closed (what it left running in the background may still
         * write), and has no deadline; a handed-over command ends with its shell, or at its deadline.
         */
        void watch() {
            Thread.ofVirtual().name("job-watch-" + id).start(() -> {
                try {
                    if (!adopted) {
                        running.awaitOutputClosed();
                    }
                    boolean exited = running.awaitExitOrDeadline();
                    ending.complete(running.finish(!exited));
                } catch (InterruptedException | RuntimeException e) {
                    running.abandon();
                    ending.completeExceptionally(e);
                } finally {
                    startedRunning.remove(running);
                }
            });
        }
    }

    /** A finished command's output, kept for a while to be read by offset. */
    private record Kept(Job job, Map<String, OutputLog> streams) {
    }

    /** Starts a job with its stdin at end of file. */
    public Job start(String command, Path workingDirectory, String cwdLabel) throws IOException, TooManyJobsException {
        return start(command, workingDirectory, cwdLabel, false);
    }

    /** Starts a job; with {@code openStdin}, its stdin is a pipe that {@link #input} writes to. */
    public synchronized Job start(String command, Path workingDirectory, String cwdLabel, boolean openStdin)
            throws IOException, TooManyJobsException {
        if (closed) {
            throw new IOException("the server is shutting down; no new jobs are started");
        }
        // Until its ending: a job whose shell has exited runs on while what it left holds its output.
        long running = jobs.values().stream().filter(e -> !e.adopted && !e.ended()).count();
        if (running >= maxRunning) {
            throw new TooManyJobsException(maxRunning);
        }
        forgetOldest();
        sweep.begin(); // before the spawn: the job runs before it is in startedRunning
        RunningCommand started = RunningCommand.start(command, workingDirectory, environment,
                openStdin ? new RunningCommand.Stdin.Open() : new RunningCommand.Stdin.AtEnd(),
                new OutputLog(logCapacity), null, null, killGrace, sweep::end);
        Entry entry = new Entry(newId("job-"), command, cwdLabel, started, false);
        startedRunning.add(started);
        jobs.put(entry.id, entry);
        try {
            entry.watch();
        } catch (Throwable failed) { // its watcher's thread refused: nothing would ever end it
            jobs.remove(entry.id);
            startedRunning.remove(started);
            started.abandon();
            throw failed;
        }
        return entry.snapshot();
    }

    /**
     * Takes over a command that {@link CommandRunner} gave back still running at its call's
     * budget: its logs keep filling (what came before is in them), its tree is killed at its own
     * deadline, whatever it leaves behind when it exits is killed too, and what was reserved for
     * it (its slot, its part in the sweep) is released once it is over. It counts against no job
     * limit: the command's slot already bounds it.
     */
    public Job adopt(RunningCommand command, String commandText, String cwdLabel) {
        Entry entry;
        synchronized (this) {
            forgetOldest();
            entry = new Entry(newId("job-"), commandText, cwdLabel, command, true);
            jobs.put(entry.id, entry);
            if (closed) {
                command.kill();
            }
        }
        entry.watch();
        return entry.snapshot();
    }

    /**
     * Keeps a finished command's output to be read by offset with {@link #output}, under a new
     * id; only the {@code maxKeptOutputs} most recent are kept.
     */
    public synchronized String keep(String command, String cwdLabel, CommandResult result) {
        String id = newId("out-");
        Map<String, OutputLog> streams = result.streams();
        long bytes = streams.values().stream().mapToLong(OutputLog::totalBytes).sum();
        Job job = new Job(id, command, cwdLabel, Instant.now().minusMillis(result.durationMillis()),
                result.durationMillis(), bytes, false, List.copyOf(streams.keySet()), false, result.ending());
        kept.put(id, new Kept(job, streams));
        while (kept.size() > maxKeptOutputs) {
            kept.remove(kept.keySet().iterator().next());
        }
        return id;
    }

    private static String newId(String prefix) {
        return prefix + HexFormat.of().toHexDigits(RANDOM.nextInt());
    }

    /** Drops the oldest finished job when the table is full. */
    private void forgetOldest() {
        if (jobs.size() < maxKept) {
            return;
        }
        jobs.values().stream().filter(Entry::ended).findFirst().ifPresent(e -> jobs.remove(e.id));
    }

    /** A job, or a finished command's kept output, by id. */
    public synchronized Optional<Job> get(String id) {
        Entry entry = jobs.get(id);
        if (entry != null) {
            return Optional.of(entry.snapshot());
        }
        return Optional.ofNullable(kept.get(id)).map(Kept::job);
    }

    /**
     * A page of one of a job's (or a kept output's) streams from {@code offset}, at most
     * {@code maxBytes}; empty when there is no such id or stream.
     */
    public Optional<OutputPage> output(String id, String stream, long offset, int maxBytes) {
        Map<String, OutputLog> streams;
        synchronized (this) {
            Entry entry = jobs.get(id);
            streams = entry != null ? entry.running.streams() : kept.containsKey(id) ? kept.get(id).streams() : Map.of();
        }
        return Optional.ofNullable(streams.get(stream)).map(log -> log.read(offset, maxBytes));
    }

    /**
     * Writes {@code bytes} to a running job's stdin, then closes it when {@code close}; waits a
     * short while for the job to take them ({@link JobInput}). Empty when there is no such job.
     */
    public Optional<InputOutcome> input(String id, byte[] bytes, boolean close) throws InterruptedException {
        Entry entry;
        synchronized (this) {
            entry = jobs.get(id);
        }
        if (entry == null) {
            return Optional.empty();
        }
        if (entry.ended() || !entry.running.isAlive()) {
            return Optional.of(new InputOutcome.Refused(InputOutcome.Reason.ENDED, 0));
        }
        JobInput input = entry.running.input();
        if (input == null) {
            return Optional.of(new InputOutcome.Refused(InputOutcome.Reason.NOT_OPEN, 0));
        }
        return Optional.of(input.send(bytes, close));
    }

    /** Kills the job's whole process tree (SIGTERM, then SIGKILL after the grace) and waits for its end. */
    public Optional<Job> stop(String id) throws InterruptedException {
        Entry entry;
        synchronized (this) {
            entry = jobs.get(id);
        }
        if (entry == null) {
            return Optional.empty();
        }
        if (!entry.ended()) {
            entry.running.kill();
            // A process that escaped the kill may hold the output pipe open: stop waiting for it.
            entry.running.giveUpOutput();
            try {
                entry.ending.get(killGrace.toMillis() + STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // reported as it stands: still running, or ended without an ending
            }
        }
        return Optional.of(entry.snapshot());
    }

    /**
     * The started jobs running now (handed-over commands are {@link CommandRunner#running}'s):
     * what the disk floor watches, without waiting for a start (hundreds of milliseconds on a
     * loaded machine).
     */
    Set<RunningCommand> running() {
        return Set.copyOf(startedRunning);
    }

    public synchronized List<Job> list() {
        List<Job> all = new ArrayList<>();
        jobs.values().forEach(e -> all.add(e.snapshot()));
        return all;
    }

    /** Kills every job; no new ones start. */
    @Override
    public void close() {
        List<Entry> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(jobs.values());
        }
        all.parallelStream().filter(e -> !e.ended()).forEach(e -> e.running.kill());
    }
}

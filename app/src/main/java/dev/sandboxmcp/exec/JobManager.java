package dev.sandboxmcp.exec;

import dev.sandboxmcp.config.Limits;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

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

    private final Map<String, String> environment;
    private final int logCapacity;
    private final Duration killGrace;
    private final int maxRunning;
    private final int maxKept;
    private final Map<String, Entry> jobs = new LinkedHashMap<>();
    private final int maxKeptOutputs;
    private final Map<String, Kept> kept = new LinkedHashMap<>();
    private final IdleSweep sweep;
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
        final long startedNanos;
        final Process process;
        final ProcessTree tree;
        /** The output logs by name, in the order job_output offers them. */
        final Map<String, OutputLog> streams;
        /** Set once the process has exited and all its output is in the logs. */
        volatile long endedNanos;
        volatile boolean stopped;
        volatile boolean timedOut;
        /** Ends when the output is complete. */
        volatile Thread watcher;

        Entry(String id, String command, String cwd, Process process, ProcessTree tree, Map<String, OutputLog> streams,
                long startedNanos) {
            this.id = id;
            this.command = command;
            this.cwd = cwd;
            this.process = process;
            this.tree = tree;
            this.streams = Collections.unmodifiableMap(new LinkedHashMap<>(streams));
            this.startedNanos = startedNanos;
            this.started = Instant.now().minusNanos(System.nanoTime() - startedNanos);
        }

        /** A command handed over at its call's budget rather than started as a job. */
        boolean adopted() {
            return !streams.containsKey("output");
        }

        Job snapshot() {
            long ended = endedNanos;
            boolean running = ended == 0;
            return new Job(id, command, cwd, started, running,
                    running ? null : process.exitValue(),
                    Duration.ofNanos((running ? System.nanoTime() : ended) - startedNanos).toMillis(),
                    streams.values().stream().mapToLong(OutputLog::totalBytes).sum(), stopped, timedOut,
                    List.copyOf(streams.keySet()));
        }
    }

    /** A finished command's output, kept for a while to be read by offset. */
    private record Kept(Job job, Map<String, OutputLog> streams) {
    }

    public synchronized Job start(String command, Path workingDirectory, String cwdLabel)
            throws IOException, TooManyJobsException, InterruptedException {
        if (closed) {
            throw new IOException("the server is shutting down; no new jobs are started");
        }
        long running = jobs.values().stream().filter(e -> !e.adopted() && e.process.isAlive()).count();
        if (running >= maxRunning) {
            throw new TooManyJobsException(maxRunning);
        }
        forgetOldest();
        sweep.begin();
        SessionShell.Started shell;
        try {
            shell = SessionShell.start(command, workingDirectory, environment, false, true);
        } catch (IOException | RuntimeException e) {
            sweep.end();
            throw e;
        }
        shell.process().onExit().thenRun(sweep::end);
        OutputLog log = new OutputLog(logCapacity);
        Entry entry = new Entry(newId("job-"), command, cwdLabel, shell.process(), shell.tree(), Map.of("output", log),
                System.nanoTime());
        jobs.put(entry.id, entry);
        entry.watcher = SessionShell.pipeThread("job-output-" + entry.id, () -> pump(entry, log));
        return entry.snapshot();
    }

    /**
     * Takes over a command that {@link CommandRunner} started and that is still running when its
     * call's budget is spent: its logs keep filling (what came before is in them), its tree is
     * killed at {@code timeout} from {@code startedNanos}, whatever it leaves behind when it exits
     * is killed too, and {@code release} runs once it is over (its slot, its part in the sweep).
     * It counts against no job limit: the command's slot already bounds it.
     */
    Job adopt(String command, String cwdLabel, Process process, ProcessTree tree, Map<String, OutputLog> streams,
            List<Thread> readers, long startedNanos, Duration timeout, Runnable release) {
        Entry entry;
        synchronized (this) {
            forgetOldest();
            entry = new Entry(newId("job-"), command, cwdLabel, process, tree, streams, startedNanos);
            jobs.put(entry.id, entry);
        }
        entry.watcher = Thread.ofVirtual().name("job-watch-" + entry.id).start(() -> {
            try {
                long left = startedNanos + timeout.toNanos() - System.nanoTime();
                if (!process.waitFor(Math.max(left, 0), TimeUnit.NANOSECONDS)) {
                    entry.timedOut = true;
                    tree.terminate(killGrace);
                }
                process.waitFor();
                tree.terminate(killGrace);
                CommandRunner.awaitReaders(process, readers);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                entry.endedNanos = System.nanoTime();
                release.run();
            }
        });
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
        Job job = new Job(id, command, cwdLabel, Instant.now().minusMillis(result.durationMillis()), false,
                result.exitCode(), result.durationMillis(), bytes, false, result.timedOut(), List.copyOf(streams.keySet()));
        kept.put(id, new Kept(job, streams));
        while (kept.size() > maxKeptOutputs) {
            kept.remove(kept.keySet().iterator().next());
        }
        return id;
    }

    private static String newId(String prefix) {
        return prefix + HexFormat.of().toHexDigits(RANDOM.nextInt());
    }

    private void pump(Entry entry, OutputLog log) {
        CommandRunner.drain(entry.process.getInputStream(), log);
        try {
            entry.process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        entry.endedNanos = System.nanoTime();
        // Whatever the job left in the background goes with it.
        entry.tree.terminate(killGrace);
    }

    /** Drops the oldest finished job when the table is full. */
    private void forgetOldest() {
        if (jobs.size() < maxKept) {
            return;
        }
        jobs.values().stream().filter(e -> !e.process.isAlive()).findFirst().ifPresent(e -> jobs.remove(e.id));
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
            streams = entry != null ? entry.streams : kept.containsKey(id) ? kept.get(id).streams() : Map.of();
        }
        return Optional.ofNullable(streams.get(stream)).map(log -> log.read(offset, maxBytes));
    }

    /** Kills the job's whole process tree (SIGTERM, then SIGKILL after the grace). */
    public Optional<Job> stop(String id) throws InterruptedException {
        Entry entry;
        synchronized (this) {
            entry = jobs.get(id);
        }
        if (entry == null) {
            return Optional.empty();
        }
        if (entry.process.isAlive()) {
            entry.stopped = true;
            entry.tree.terminate(killGrace);
            entry.process.waitFor();
        }
        awaitOutput(entry);
        return Optional.of(entry.snapshot());
    }

    /** Waits for the log to hold everything; a process that escaped the kill may keep the pipe open. */
    private static void awaitOutput(Entry entry) throws InterruptedException {
        if (!entry.watcher.join(Duration.ofSeconds(3))) {
            try {
                entry.process.getInputStream().close();
            } catch (IOException ignored) {
                // the reader ends with the escaped process
            }
            entry.watcher.join(Duration.ofSeconds(1));
        }
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
        all.parallelStream().forEach(e -> {
            e.stopped = true;
            e.tree.terminate(killGrace);
        });
    }
}

package dev.sandboxmcp.exec;

import java.io.IOException;
import java.io.InputStream;
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

/**
 * Background jobs: commands that outlive one tool call (builds, servers, test suites). They
 * belong to the server, not to an MCP session, so they survive client reconnects. Their combined
 * stdout and stderr is kept in a bounded log. At most {@code maxRunning} run at once and
 * {@code maxKept} are remembered (the oldest finished one is forgotten first); all are killed,
 * whole process tree included, on shutdown.
 */
public final class JobManager implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Map<String, String> environment;
    private final int logCapacity;
    private final Duration killGrace;
    private final int maxRunning;
    private final int maxKept;
    private final Map<String, Entry> jobs = new LinkedHashMap<>();
    private final IdleSweep sweep;
    private boolean closed;

    public JobManager(Map<String, String> environment, int logCapacity, Duration killGrace, int maxRunning, int maxKept) {
        this(environment, logCapacity, killGrace, maxRunning, maxKept, IdleSweep.NONE);
    }

    /** As above; each job takes part in {@code sweep} until its process exits. */
    public JobManager(Map<String, String> environment, int logCapacity, Duration killGrace, int maxRunning, int maxKept,
            IdleSweep sweep) {
        this.sweep = sweep;
        this.environment = Map.copyOf(environment);
        this.logCapacity = logCapacity;
        this.killGrace = killGrace;
        this.maxRunning = maxRunning;
        this.maxKept = maxKept;
    }

    /** Thrown when {@code maxRunning} jobs are running. */
    public static final class TooManyJobsException extends Exception {
        TooManyJobsException(int limit) {
            super(limit + " jobs are already running (the limit); stop one with stop_job or wait for one to finish");
        }
    }

    private final class Entry {
        final String id;
        final String command;
        final String cwd;
        final Instant started = Instant.now();
        final long startedNanos = System.nanoTime();
        final Process process;
        final ProcessTree tree;
        final OutputLog log = new OutputLog(logCapacity);
        /** Set once the process has exited and all its output is in the log. */
        volatile long endedNanos;
        volatile boolean stopped;
        Thread pump;

        Entry(String id, String command, String cwd, Process process, ProcessTree tree) {
            this.id = id;
            this.command = command;
            this.cwd = cwd;
            this.process = process;
            this.tree = tree;
        }

        Job snapshot() {
            long ended = endedNanos;
            boolean running = ended == 0;
            return new Job(id, command, cwd, started, running, running ? null : process.exitValue(),
                    Duration.ofNanos((running ? System.nanoTime() : ended) - startedNanos).toMillis(), log.total(), stopped);
        }
    }

    public synchronized Job start(String command, Path workingDirectory, String cwdLabel)
            throws IOException, TooManyJobsException, InterruptedException {
        if (closed) {
            throw new IOException("the server is shutting down; no new jobs are started");
        }
        long running = jobs.values().stream().filter(e -> e.process.isAlive()).count();
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
        String id = "job-" + HexFormat.of().toHexDigits(RANDOM.nextInt());
        Entry entry = new Entry(id, command, cwdLabel, shell.process(), shell.tree());
        jobs.put(id, entry);
        entry.pump = Thread.ofVirtual().name("job-output-" + id).start(() -> pump(entry));
        return entry.snapshot();
    }

    private void pump(Entry entry) {
        byte[] buffer = new byte[16384];
        try (InputStream in = entry.process.getInputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                entry.log.append(buffer, n);
            }
        } catch (IOException closedUnderUs) {
            // the job was killed
        }
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

    public synchronized Optional<Job> get(String id) {
        return Optional.ofNullable(jobs.get(id)).map(Entry::snapshot);
    }

    /** A page of a job's output from {@code offset}, at most {@code maxBytes}. */
    public Optional<OutputPage> output(String id, long offset, int maxBytes) {
        Entry entry;
        synchronized (this) {
            entry = jobs.get(id);
        }
        return Optional.ofNullable(entry).map(e -> e.log.read(offset, maxBytes));
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
        if (!entry.pump.join(Duration.ofSeconds(3))) {
            try {
                entry.process.getInputStream().close();
            } catch (IOException ignored) {
                // the reader ends with the escaped process
            }
            entry.pump.join(Duration.ofSeconds(1));
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

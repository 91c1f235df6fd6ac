package dev.sandboxmcp.config;

import static dev.sandboxmcp.config.Limit.Unit.BYTES;
import static dev.sandboxmcp.config.Limit.Unit.COUNT;
import static dev.sandboxmcp.config.Limit.Unit.MEBIBYTES;
import static dev.sandboxmcp.config.Limit.Unit.MILLIS;
import static dev.sandboxmcp.config.Limit.Unit.SECONDS;

import java.time.Duration;
import java.util.Map;

/**
 * Every bound the server and the runner enforce, each declared once: its component here, with
 * its default, variable, unit, range and doc line in its {@link Limit} (as Javalin's
 * {@code HttpConfig} keeps each setting beside its default). The server reads them from its
 * environment ({@link #fromEnvironment}) and states them to the runner in its welcome
 * ({@link #values}, {@link #fromValues}): the runner has no settings of its own to keep equal.
 * No code calls the canonical constructor but {@link DeclaredLimits}, which checks every value.
 * To add a limit: a component with its {@code @Limit} (declared after any limit its
 * {@code atMost} names), and, for a setting, its row in docs/configuration.md ({@code LimitsTest}
 * prints the row).
 */
public record Limits(
        @Limit(variable = "MCP_COMMAND_TIMEOUT_MAX_SECONDS", unit = SECONDS, byDefault = 120, min = 1, max = 3600,
                doc = "largest deadline a caller may ask for")
        Duration maxTimeout,
        @Limit(variable = "MCP_COMMAND_TIMEOUT_SECONDS", unit = SECONDS, byDefault = 30, min = 1, max = 3600,
                atMost = "maxTimeout", doc = "a command's deadline when the caller names none")
        Duration defaultTimeout,
        @Limit(variable = "MCP_KILL_GRACE_MILLIS", unit = MILLIS, byDefault = 2000, min = 0, max = 60_000,
                doc = "time between SIGTERM and SIGKILL for a command's processes")
        Duration killGrace,
        @Limit(variable = "MCP_OUTPUT_LIMIT_BYTES", unit = BYTES, byDefault = 256 * 1024, min = 1024, max = 64 * 1024 * 1024,
                doc = "bytes kept of the end of each of stdout and stderr (readable by offset after the call)")
        int outputCapBytes,
        @Limit(variable = "MCP_OUTPUT_VIEW_BYTES", unit = BYTES, byDefault = 16 * 1024, min = 1024, max = 64 * 1024 * 1024,
                atMost = "outputCapBytes", doc = "output a `run_command` result shows, both streams together (head and "
                + "tail), counted as JSON escapes it (a control character takes six bytes); the rest is left out and "
                + "read by offset")
        int outputViewBytes,
        @Limit(variable = "MCP_CALL_BUDGET_SECONDS", unit = SECONDS, byDefault = 50, min = 1, max = 3600,
                doc = "longest a `run_command` call lasts; a command still running then goes on as a job. Keep it "
                + "below your client's request timeout (60 s for the TypeScript SDK)")
        Duration callBudget,
        @Limit(variable = "MCP_FILE_LIMIT_BYTES", unit = BYTES, byDefault = 1024 * 1024, min = 1024, max = 64 * 1024 * 1024,
                doc = "largest file read and largest content written in one call; a `read_file` page with a `limit` "
                + "holds at most this, counted as JSON escapes its text")
        int fileMaxBytes,
        @Limit(variable = "MCP_MAX_CONCURRENT_COMMANDS", unit = COUNT, byDefault = 8, min = 1, max = 1024,
                doc = "commands running at once")
        int maxConcurrentCommands,
        @Limit(variable = "MCP_MAX_JOBS", unit = COUNT, byDefault = 4, min = 1, max = 64,
                doc = "background jobs running at once")
        int maxJobs,
        @Limit(variable = "MCP_MAX_REQUEST_BYTES", unit = BYTES, byDefault = 8 * 1024 * 1024, min = 64 * 1024,
                max = 512 * 1024 * 1024, doc = "largest MCP request body (larger gets `413`)")
        int maxRequestBytes,
        @Limit(variable = "MCP_KEEPALIVE_SECONDS", unit = SECONDS, byDefault = 20, min = 1, max = 3600,
                doc = "interval of keep-alive pings on open event streams")
        Duration keepAlive,
        @Limit(variable = "MCP_MAX_CONNECTIONS", unit = COUNT, byDefault = 1024, min = 1, max = 65536,
                doc = "connections open at once; one more is answered `503` and closed. Behind a proxy, one client "
                + "needs a few; raise it only with the file-descriptor limit in mind")
        int maxConnections,
        @Limit(variable = "MCP_IDLE_TIMEOUT_SECONDS", unit = SECONDS, byDefault = 120, min = 1, max = 3600,
                doc = "a connection with no request in progress (or with a read or write stalled) is closed after "
                + "this long; a request being handled is not cut by it. Keep it above the reverse proxy's idle timeout "
                + "for its pooled connections (Traefik's default is 90 s), so the proxy, not the server, closes them")
        Duration idleTimeout,
        @Limit(unit = SECONDS, byDefault = 10,
                doc = "how long a request's line and headers may take to arrive, from its first byte")
        Duration requestHeadTimeout,
        @Limit(unit = SECONDS, byDefault = 30,
                doc = "the part of a body's deadline that does not depend on its size: it covers the bodyBudgetWait a "
                + "message may spend waiting before it is read (see requestBodyTimeout)")
        Duration requestBodyGrace,
        @Limit(unit = SECONDS, byDefault = 20,
                doc = "how long a message may wait for room among the bodies being handled at once (half the "
                + "heap) before it is refused as busy (503)")
        Duration bodyBudgetWait,
        @Limit(unit = BYTES, byDefault = 16 * 1024, doc = "the slowest rate a body may arrive at, per second, beyond the grace")
        int minRequestBytesPerSecond,
        @Limit(unit = BYTES, byDefault = 64 * 1024,
                doc = "a page of job_output, and of read_file when no limit is given, counted as JSON escapes its text")
        int pageBytes,
        @Limit(unit = COUNT, byDefault = 2000, doc = "lines of a read_file page when no limit is given")
        int pageLines,
        @Limit(unit = COUNT, byDefault = 16,
                doc = "finished commands whose output stays readable by offset (the most recent)")
        int keptOutputs,
        @Limit(unit = BYTES, byDefault = 1024 * 1024, doc = "output kept of each background job: its most recent bytes")
        int jobLogBytes,
        @Limit(unit = SECONDS, byDefault = 5,
                doc = "how often a run_command call sends a progress notification, when the caller asked for them (it "
                + "also keeps proxies from cutting the stream)")
        Duration progressInterval,
        @Limit(unit = COUNT, byDefault = 100_000, doc = "the most lines one read_file call may ask for (limit or tail)")
        int readLinesMax,
        @Limit(unit = COUNT, byDefault = 2000, doc = "entries a list_directory call shows at most; the result says when it cut")
        int listEntries,
        @Limit(unit = COUNT, byDefault = 128 * 1024, doc = "characters of edit_file's diff shown at most; the edit itself is never cut")
        int diffChars,
        @Limit(unit = BYTES, byDefault = 64 * 1024, doc = "bytes one job_input call may write to a job's stdin (a pipe "
                + "holds 64 KiB unread; more goes in several calls)")
        int jobInputBytes,
        @Limit(variable = "MCP_DISK_FLOOR_MIB", unit = MEBIBYTES, byDefault = 2048, min = 0, max = 1 << 24,
                doc = "the disk floor: free space the workspace's and the runner's home's filesystems keep, at least "
                + "this many MiB...")
        int diskFloorMiB,
        @Limit(variable = "MCP_DISK_FLOOR_PERCENT", unit = COUNT, byDefault = 5, min = 0, max = 50,
                doc = "...or this share of each filesystem's size, in percent, whichever is larger. Below it the command "
                + "or job writing is stopped and `write_file`/`edit_file` refuse ([tools.md](tools.md)); both 0 turn the "
                + "floor off")
        int diskFloorPercent) {

    /**
     * The longest command line a shell can be handed, in bytes, its terminating NUL included: the
     * kernel's MAX_ARG_STRLEN, a fact of Linux rather than a setting.
     */
    public static final int COMMAND_BYTES = 128 * 1024;

    /** Every limit at its default. */
    public static Limits defaults() {
        return DeclaredLimits.DEFAULTS;
    }

    /** The limits set in {@code env} (the variables of the settings), the others at their defaults. */
    public static Limits fromEnvironment(Map<String, String> env) throws ConfigException {
        return DeclaredLimits.read(env);
    }

    /** Each limit by its name (the component's), as a number in its unit, in declaration order: the welcome's field. */
    public Map<String, Long> values() {
        return DeclaredLimits.values(this);
    }

    /**
     * The limits {@link #values} gave: every limit named once, each within its range (a fixed one
     * at its default), or an {@code IllegalArgumentException} that says which is not.
     */
    public static Limits fromValues(Map<String, Long> values) {
        return DeclaredLimits.fromValues(values);
    }

    /**
     * The most file or command text one result shows, in bytes as JSON escapes it (a control
     * character takes six; {@code exec.EscapedSize}): a read_file page with a limit, any other
     * page, or run_command's view of its output. Each pager holds its text to its own limit.
     */
    public int shownTextBytes() {
        return Math.max(fileMaxBytes, Math.max(pageBytes, outputViewBytes));
    }

    /**
     * The most a result's text takes on the channel as JSON: {@link #shownTextBytes}, twice (the
     * text block and the structured content). The listings (list_directory, list_jobs), which no
     * page bounds, are held to it as well.
     */
    public long resultTextBytes() {
        return 2L * shownTextBytes();
    }

    /** Background jobs remembered, running or finished (the oldest finished one is forgotten first). */
    public int keptJobs() {
        return maxJobs * 4;
    }

    /**
     * The most jobs the job table holds at once: {@link #keptJobs}, or more when more than that run
     * at once (start_job's and the commands run_command handed over, which only the command slots
     * bound); a finished one is forgotten only to make room.
     */
    public int mostJobsHeld() {
        return Math.max(keptJobs(), maxJobs + maxConcurrentCommands);
    }

    /** The disk floor's fixed part, in bytes. */
    public long diskFloorBytes() {
        return (long) diskFloorMiB << 20;
    }

    /** How long a request body of {@code bytes} may take to arrive, from the end of the request's head. */
    public Duration requestBodyTimeout(long bytes) {
        return requestBodyGrace.plusMillis(bytes * 1000 / minRequestBytesPerSecond);
    }
}

package dev.sandboxmcp.config;

import java.time.Duration;

/**
 * Every bound the server enforces, in one place.
 *
 * @param defaultTimeout     a command's deadline when the caller names none
 * @param maxTimeout         the longest deadline a caller may ask for
 * @param killGrace          time between SIGTERM and SIGKILL for a command's processes
 * @param outputCapBytes     bytes kept of each of stdout and stderr
 * @param fileMaxBytes       largest file read and largest content written in one call
 * @param maxConcurrentCommands commands that may run at once
 * @param maxRequestBytes    largest MCP message body accepted (larger gets 413)
 * @param keepAlive          interval of keep-alive pings on open event streams
 * @param maxJobs            background jobs that may run at once
 * @param idleTimeout        how long a connection may stay open with no request on it (between
 *                           requests, or before a request's first byte), or with a read or write
 *                           stalled; a request being handled (a long command, an open event
 *                           stream) is not cut by it, however long it stays silent
 * @param requestHeadTimeout how long a request's line and headers may take to arrive, from its first byte
 * @param requestBodyGrace   the part of a body's deadline that does not depend on its size: it
 *                           covers the {@code bodyBudgetWait} a message may spend waiting before
 *                           it is read (see {@link #requestBodyTimeout})
 * @param bodyBudgetWait     how long a message may wait for room among the bodies being handled
 *                           at once (an eighth of the heap) before it is refused as busy (503)
 * @param minRequestBytesPerSecond the slowest rate a body may arrive at, beyond the grace
 * @param maxConnections     connections open at once; one past it is answered 503 and closed
 * @param callBudget         how long a run_command call may take before it returns with the
 *                           command still running, handed over to a job (clients give up near 60 s)
 * @param outputViewBytes    how much of a command's stdout and stderr together a call shows (head
 *                           and tail); the rest is left out and read by offset
 * @param pageBytes          a page of job_output, and of read_file when no limit is given
 * @param pageLines          lines of a read_file page when no limit is given
 * @param keptOutputs        finished commands whose output stays readable by offset (the most recent)
 * @param jobLogBytes        output kept of each background job: its most recent bytes
 * @param progressInterval   how often a run_command call sends a progress notification, when the
 *                           caller asked for them (it also keeps proxies from cutting the stream)
 * @param readLinesMax       the most lines one read_file call may ask for (limit or tail)
 * @param listEntries        entries a list_directory call shows at most; the result says when it cut
 * @param diffChars          characters of edit_file's diff shown at most; the edit itself is never cut
 * @param jobInputBytes      bytes one job_input call may write to a job's stdin (a pipe holds 64 KiB
 *                           unread; more goes in several calls)
 */
public record Limits(
        Duration defaultTimeout,
        Duration maxTimeout,
        Duration killGrace,
        int outputCapBytes,
        int fileMaxBytes,
        int maxConcurrentCommands,
        int maxRequestBytes,
        Duration keepAlive,
        int maxJobs,
        Duration idleTimeout,
        Duration requestHeadTimeout,
        Duration requestBodyGrace,
        Duration bodyBudgetWait,
        int minRequestBytesPerSecond,
        int maxConnections,
        Duration callBudget,
        int outputViewBytes,
        int pageBytes,
        int pageLines,
        int keptOutputs,
        int jobLogBytes,
        Duration progressInterval,
        int readLinesMax,
        int listEntries,
        int diffChars,
        int jobInputBytes) {

    /**
     * The longest command line a shell can be handed, in bytes, its terminating NUL included: the
     * kernel's MAX_ARG_STRLEN, a fact of Linux rather than a setting.
     */
    public static final int COMMAND_BYTES = 128 * 1024;

    public static Limits defaults() {
        return new Limits(
                Duration.ofSeconds(30),     // defaultTimeout
                Duration.ofSeconds(120),    // maxTimeout
                Duration.ofSeconds(2),      // killGrace
                256 * 1024,                 // outputCapBytes
                1024 * 1024,                // fileMaxBytes
                8,                          // maxConcurrentCommands
                8 * 1024 * 1024,            // maxRequestBytes
                Duration.ofSeconds(20),     // keepAlive
                4,                          // maxJobs
                Duration.ofSeconds(120),    // idleTimeout
                Duration.ofSeconds(10),     // requestHeadTimeout
                Duration.ofSeconds(30),     // requestBodyGrace
                Duration.ofSeconds(20),     // bodyBudgetWait
                16 * 1024,                  // minRequestBytesPerSecond
                1024,                       // maxConnections
                Duration.ofSeconds(50),     // callBudget
                16 * 1024,                  // outputViewBytes
                64 * 1024,                  // pageBytes
                2000,                       // pageLines
                16,                         // keptOutputs
                1024 * 1024,                // jobLogBytes
                Duration.ofSeconds(5),      // progressInterval
                100_000,                    // readLinesMax
                2000,                       // listEntries
                128 * 1024,                 // diffChars
                64 * 1024);                 // jobInputBytes
    }

    /** Background jobs remembered, running or finished (the oldest finished one is forgotten first). */
    public int keptJobs() {
        return maxJobs * 4;
    }

    /** How long a request body of {@code bytes} may take to arrive, from the end of the request's head. */
    public Duration requestBodyTimeout(long bytes) {
        return requestBodyGrace.plusMillis(bytes * 1000 / minRequestBytesPerSecond);
    }
}

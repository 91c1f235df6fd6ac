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
 *                           requests, or before a request's first byte); a request in progress,
 *                           however long it stays silent, is not cut by it
 * @param requestHeadTimeout how long a request's line and headers may take to arrive, from its first byte
 * @param minRequestBytesPerSecond the slowest average rate a request body may arrive at (slower gets 408)
 * @param maxConnections     connections open at once; one past it is answered 503 and closed
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
        int minRequestBytesPerSecond,
        int maxConnections) {

    public static Limits defaults() {
        return new Limits(Duration.ofSeconds(30), Duration.ofSeconds(120), Duration.ofSeconds(2),
                256 * 1024, 1024 * 1024, 8, 8 * 1024 * 1024, Duration.ofSeconds(20), 4,
                Duration.ofSeconds(120), Duration.ofSeconds(10), 16 * 1024, 1024);
    }
}

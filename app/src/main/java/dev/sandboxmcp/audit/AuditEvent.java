package dev.sandboxmcp.audit;

import java.time.Instant;

/**
 * One tool call, as it goes into the audit log. Holds what was asked (the command or path) and
 * how it ended, never file contents, command output or credentials.
 *
 * @param call     the call's number in this server's run, as its {@link CallStarted} gave it
 * @param target   the command line or the path the call named
 * @param outcome  how the call ended
 * @param exitCode the command's exit code, or null for file tools
 * @param bytes    bytes read, written or printed, or null when none
 * @param client   the caller's address, as far as the trusted proxies vouch for it
 * @param peer     the address of the TCP peer (a proxy, when there is one)
 * @param error    the error message given to the assistant, or null
 */
public record AuditEvent(long call, Instant time, String tool, String target, Outcome outcome, Integer exitCode, Long bytes,
        long durationMillis, String client, String peer, String error) {

    /** How a call ended; the log spells it in lower case ("ok", "timeout"). */
    public enum Outcome {
        OK,
        /** The tool answered with an error (bad arguments included). */
        ERROR,
        /** A command hit its deadline. */
        TIMEOUT,
        /** The client cancelled the call. */
        CANCELLED
    }
}

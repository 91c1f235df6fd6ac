package dev.sandboxmcp.exec;

/**
 * How a command or job ended. {@code exitCode} is the shell's status (128 + n when signal n ended
 * it); {@code timedOut}: its deadline killed it; {@code durationMillis}: wall time from its start
 * to the shell's exit.
 */
public record Ending(int exitCode, boolean timedOut, long durationMillis) {
}

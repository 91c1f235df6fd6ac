package dev.sandboxmcp.exec;

/**
 * The outcome of one command. {@code exitCode} is the shell's status (128 + n when a signal
 * ended it); {@code timedOut} says the runner killed it at its deadline.
 */
public record CommandResult(int exitCode, CapturedOutput stdout, CapturedOutput stderr, boolean timedOut,
        long durationMillis) {
}

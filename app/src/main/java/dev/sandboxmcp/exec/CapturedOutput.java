package dev.sandboxmcp.exec;

/**
 * What one output stream of a command produced: the text kept (at most the cap, decoded as
 * UTF-8 with invalid sequences replaced), how many bytes the stream carried in all, and whether
 * the kept text is only the beginning of it.
 */
public record CapturedOutput(String text, long totalBytes, boolean truncated) {
}

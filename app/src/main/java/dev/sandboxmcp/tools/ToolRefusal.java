package dev.sandboxmcp.tools;

/**
 * A tool's refusal: a bad argument, a file that cannot be read, a limit reached. The one way a
 * handler says no; its message is what the assistant reads, with what to do next, and
 * {@link LocalTools} makes it a result with {@code isError}.
 */
public final class ToolRefusal extends Exception {
    public ToolRefusal(String message) {
        super(message, null, false, false);
    }
}

package dev.sandboxmcp.tools;

/** An argument that is missing, of the wrong type or out of range. */
public final class ToolInputException extends Exception {
    public ToolInputException(String message) {
        super(message);
    }
}

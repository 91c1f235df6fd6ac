package dev.sandboxmcp.workspace;

import java.io.IOException;

/**
 * A workspace operation that was refused or failed. The message is written for the
 * assistant: it names the path and says what to do instead.
 */
public final class WorkspaceException extends IOException {

    /** Why the operation did not happen; each reason maps to its own clear tool error. */
    public enum Reason {
        INVALID_PATH,
        ESCAPES_WORKSPACE,
        NOT_FOUND,
        PARENT_MISSING,
        IS_DIRECTORY,
        NOT_A_DIRECTORY,
        NOT_A_REGULAR_FILE,
        TOO_LARGE,
        TOO_MANY_LINKS,
        PERMISSION_DENIED,
        CHANGED,
        IO_ERROR
    }

    private final Reason reason;

    public WorkspaceException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public WorkspaceException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}

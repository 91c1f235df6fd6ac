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
        /** A file the host runs by itself ({@link ProtectedPaths}); {@link #protectedKind()} says which. */
        PROTECTED,
        IO_ERROR
    }

    private final Reason reason;
    private final ProtectedPaths.Kind protectedKind;
    private final String resolvedPath;

    public WorkspaceException(Reason reason, String message) {
        this(reason, message, null);
    }

    public WorkspaceException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
        this.protectedKind = null;
        this.resolvedPath = null;
    }

    /** A refused write to a protected file: which kind, and the path it resolved to from the root. */
    WorkspaceException(ProtectedPaths.Kind kind, String resolvedPath) {
        super(resolvedPath + " is protected (" + kind + ")");
        this.reason = Reason.PROTECTED;
        this.protectedKind = kind;
        this.resolvedPath = resolvedPath;
    }

    public Reason reason() {
        return reason;
    }

    /** With {@link Reason#PROTECTED}: what the file is; otherwise null. */
    public ProtectedPaths.Kind protectedKind() {
        return protectedKind;
    }

    /** With {@link Reason#PROTECTED}: the path the request resolved to, from the workspace root; otherwise null. */
    public String resolvedPath() {
        return resolvedPath;
    }
}

package dev.sandboxmcp.workspace;

import dev.sandboxmcp.workspace.OpenAt.Failure;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/**
 * A workspace operation that was refused or failed, as facts, the way Go's {@code PathError}
 * carries {@code Op}, {@code Path} and {@code Err}: the {@link #reason()}, the {@link #path()} as it
 * was asked for, and where it applies {@link #resolvedPath()}, {@link #size()}, {@link #limit()}
 * and {@link #protectedKind()}. The message states what happened, with the path; it names no
 * tool. What to do next is the caller's to word (the tools say which tool to use instead).
 */
public final class WorkspaceException extends IOException {

    /** Why the operation did not happen; each reason maps to its own clear tool error. */
    public enum Reason {
        INVALID_PATH,
        ESCAPES_WORKSPACE,
        NOT_FOUND,
        /** A directory on the way does not exist; {@link #resolvedPath()} says which. */
        PARENT_MISSING,
        IS_DIRECTORY,
        NOT_A_DIRECTORY,
        NOT_A_REGULAR_FILE,
        /** The file is over the limit; {@link #size()} and {@link #limit()} say by how much. */
        TOO_LARGE,
        TOO_MANY_LINKS,
        PERMISSION_DENIED,
        CHANGED,
        /** A file the host runs by itself ({@link ProtectedPaths}); {@link #protectedKind()} says which. */
        PROTECTED,
        IO_ERROR
    }

    /** What {@link #size()} is when the file grew past the limit while it was read: more, by an unknown amount. */
    public static final long SIZE_UNKNOWN = -1;

    private final Reason reason;
    private final String path;
    private final String resolvedPath;
    private final long size;
    private final long limit;
    private final ProtectedPaths.Kind protectedKind;

    private WorkspaceException(Reason reason, String path, String message, Throwable cause, String resolvedPath, long size,
            long limit, ProtectedPaths.Kind protectedKind) {
        super(message, cause);
        this.reason = reason;
        this.path = path;
        this.resolvedPath = resolvedPath;
        this.size = size;
        this.limit = limit;
        this.protectedKind = protectedKind;
    }

    WorkspaceException(Reason reason, String path, String message) {
        this(reason, path, message, null);
    }

    WorkspaceException(Reason reason, String path, String message, Throwable cause) {
        this(reason, path, message, cause, null, 0, 0, null);
    }

    /** {@code path} is {@code size} bytes ({@link #SIZE_UNKNOWN}: it grew while it was read), over {@code limit}. */
    static WorkspaceException tooLarge(String path, long size, long limit) {
        String measured = size > limit ? size + " bytes" : "more than " + limit + " bytes";
        return new WorkspaceException(Reason.TOO_LARGE, path,
                Names.quoted(path) + " is " + measured + ", over the limit of " + limit + " bytes", null, null,
                size > limit ? size : SIZE_UNKNOWN, limit, null);
    }

    /** The directory {@code missing} (from the root) on the way to {@code path} does not exist. */
    static WorkspaceException parentMissing(String path, String missing) {
        return new WorkspaceException(Reason.PARENT_MISSING, path,
                Names.quoted(path) + ": directory " + Names.quoted(missing) + " does not exist", null, missing, 0, 0, null);
    }

    /** A refused write to a protected file: which kind, and the path it resolved to from the root. */
    static WorkspaceException protectedFile(String path, ProtectedPaths.Kind kind, String resolvedPath) {
        return new WorkspaceException(Reason.PROTECTED, path, resolvedPath + " is protected (" + kind + ")", null,
                resolvedPath, 0, 0, kind);
    }

    /** What the operating system's refusal of an operation on {@code path} means here. */
    static WorkspaceException of(String path, FileSystemException e) {
        String shown = Names.quoted(path);
        if (e instanceof Failure failure) {
            return switch (failure.errno) {
                case OpenAt.ENOENT -> notFound(path, e);
                case OpenAt.ELOOP -> swappedForLink(path, e);
                case OpenAt.ENOTDIR -> new WorkspaceException(Reason.CHANGED, path, shown
                        + " changed during the operation (a directory on the way was replaced); try again", e);
                case OpenAt.ENXIO -> notARegularFile(path, e);
                case OpenAt.EISDIR -> isDirectory(path, e);
                case OpenAt.EACCES, OpenAt.EPERM -> permissionDenied(path, e);
                case OpenAt.EEXIST -> changedWhileWritten(path, e);
                default -> new WorkspaceException(Reason.IO_ERROR, path, shown + ": " + e.getReason(), e);
            };
        }
        if (e instanceof NoSuchFileException) {
            return notFound(path, e);
        }
        if (e instanceof FileAlreadyExistsException) {
            return changedWhileWritten(path, e);
        }
        if (e instanceof AccessDeniedException) {
            return permissionDenied(path, e);
        }
        String reason = e.getReason() == null ? e.getClass().getSimpleName() : e.getReason();
        if (reason.contains("Too many levels of symbolic links")) {
            return swappedForLink(path, e);
        }
        return new WorkspaceException(Reason.IO_ERROR, path, shown + ": " + reason, e);
    }

    static WorkspaceException notFound(String path, Throwable cause) {
        return new WorkspaceException(Reason.NOT_FOUND, path, "no such file: " + Names.quoted(path), cause);
    }

    static WorkspaceException isDirectory(String path, Throwable cause) {
        return new WorkspaceException(Reason.IS_DIRECTORY, path, Names.quoted(path) + " is a directory, not a file", cause);
    }

    static WorkspaceException notARegularFile(String path, Throwable cause) {
        return new WorkspaceException(Reason.NOT_A_REGULAR_FILE, path,
                Names.quoted(path) + " is not a regular file (a device, socket or FIFO)", cause);
    }

    private static WorkspaceException swappedForLink(String path, FileSystemException e) {
        return new WorkspaceException(Reason.ESCAPES_WORKSPACE, path,
                Names.quoted(path) + " was replaced by a symbolic link during the operation; try again", e);
    }

    private static WorkspaceException changedWhileWritten(String path, FileSystemException e) {
        return new WorkspaceException(Reason.IO_ERROR, path,
                Names.quoted(path) + " changed while it was being written; try again", e);
    }

    private static WorkspaceException permissionDenied(String path, FileSystemException e) {
        return new WorkspaceException(Reason.PERMISSION_DENIED, path, Names.quoted(path) + ": permission denied", e);
    }

    public Reason reason() {
        return reason;
    }

    /** The name the operation was asked for, as given (the root's own path when opening the workspace failed). */
    public String path() {
        return path;
    }

    /**
     * From the workspace root, after {@code ..} and links: with {@link Reason#PARENT_MISSING} the
     * directory that is missing, with {@link Reason#PROTECTED} the file; otherwise null.
     */
    public String resolvedPath() {
        return resolvedPath;
    }

    /** With {@link Reason#TOO_LARGE}: the file's size in bytes, or {@link #SIZE_UNKNOWN}; otherwise 0. */
    public long size() {
        return size;
    }

    /** With {@link Reason#TOO_LARGE}: the most bytes allowed; otherwise 0. */
    public long limit() {
        return limit;
    }

    /** With {@link Reason#PROTECTED}: what the file is; otherwise null. */
    public ProtectedPaths.Kind protectedKind() {
        return protectedKind;
    }
}

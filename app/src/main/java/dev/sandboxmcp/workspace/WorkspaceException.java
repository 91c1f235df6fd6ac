package dev.sandboxmcp.workspace;

import dev.sandboxmcp.workspace.OpenAt.Failure;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.Locale;

/**
 * A workspace operation that was refused or failed, as facts, in the shape of Go's
 * {@code PathError}: the {@link #op()}, the {@link #path()} as it was asked for, and the
 * {@link #err()}, one record per kind of failure with the facts of that kind (the missing
 * directory, the size and the limit, the protected file). {@link #reason()} classifies it for
 * callers that branch on it, as Go's {@code errors.Is(err, fs.ErrNotExist)} does.
 *
 * <p>The message is Go's too, {@code op path: err}, for logs; the words an assistant reads, and
 * what to do next, are the caller's ({@code tools/WorkspaceErrors}).
 */
public final class WorkspaceException extends IOException {

    /** What was being done. */
    public enum Op {
        /** Opening the workspace root itself. */
        OPEN("open"),
        READ("read"),
        LIST("list"),
        WRITE("write"),
        /** A write that happens only while the file still holds what was read. */
        EDIT("edit"),
        APPEND("append to"),
        /** Resolving a directory, for a command's working directory. */
        RESOLVE("resolve");

        private final String verb;

        Op(String verb) {
            this.verb = verb;
        }

        /** The operation as a verb: "read", "append to". */
        public String verb() {
            return verb;
        }
    }

    /** Why the operation did not happen, coarser than {@link Err}: for callers that branch on it. */
    public enum Reason {
        INVALID_PATH, ESCAPES_WORKSPACE, NOT_FOUND, PARENT_MISSING, IS_DIRECTORY, NOT_A_DIRECTORY,
        NOT_A_REGULAR_FILE, TOO_LARGE, TOO_MANY_LINKS, PERMISSION_DENIED, CHANGED, PROTECTED, IO_ERROR
    }

    /** What went wrong, with its facts: Go's {@code PathError.Err}, one record per kind. */
    public sealed interface Err {
    }

    /** Why a path is not one the workspace takes. */
    public enum Invalid { EMPTY, NUL_BYTE, ABSOLUTE }

    public record InvalidPath(Invalid why) implements Err {
    }

    /** A {@code ..} above the root. */
    public record AboveRoot() implements Err {
    }

    /** The symbolic link {@code link} (from the root) has the absolute text {@code target}. */
    public record AbsoluteLink(String link, String target) implements Err {
    }

    /** A name that was no link when walked was one when opened ({@code ELOOP} under {@code O_NOFOLLOW}). */
    public record SwappedForLink() implements Err {
    }

    /** More than {@code limit} links followed in one walk (a loop?). */
    public record TooManyLinks(int limit) implements Err {
    }

    public record NotFound() implements Err {
    }

    /** The directory {@code missing} (from the root) on the way does not exist. */
    public record ParentMissing(String missing) implements Err {
    }

    /** {@code which} (from the root; null: the path itself) is not a directory, though used as one. */
    public record NotADirectory(String which) implements Err {
    }

    public record IsDirectory() implements Err {
    }

    /** A device, socket or FIFO. */
    public record NotARegularFile() implements Err {
    }

    /** The file is {@code size} bytes ({@link #SIZE_UNKNOWN}: it grew past the limit while read), over {@code limit}. */
    public record TooLarge(long size, long limit) implements Err {
    }

    public record PermissionDenied() implements Err {
    }

    /** What changed under the operation. */
    public enum Change {
        /** A directory on the way was replaced ({@code ENOTDIR}). */
        DIRECTORY_REPLACED,
        /** A name the operation was creating appeared meanwhile ({@code EEXIST}). */
        NAME_TAKEN,
        /** The file no longer holds what was read (an edit). */
        CONTENT
    }

    public record Changed(Change what) implements Err {
    }

    /** A file the host runs by itself ({@link ProtectedPaths}), {@code resolved} from the root. */
    public record Protected(ProtectedPaths.Kind kind, String resolved) implements Err {
    }

    /** Any other failure, as the operating system or the JDK stated it. */
    public record Failed(String detail) implements Err {
    }

    /** The change was written, but its directory could not be synced: it may not survive a crash. */
    public record NotSynced(String detail) implements Err {
    }

    /** The size {@link TooLarge} states when the file grew past the limit while it was read. */
    public static final long SIZE_UNKNOWN = -1;

    private final Op op;
    private final String path;
    private final Err err;

    WorkspaceException(Op op, String path, Err err, Throwable cause) {
        super(op.verb() + " " + Names.quoted(path) + ": " + brief(err), cause);
        this.op = op;
        this.path = path;
        this.err = err;
    }

    WorkspaceException(Op op, String path, Err err) {
        this(op, path, err, null);
    }

    /** What the operating system's refusal of {@code op} on {@code path} means here. */
    static WorkspaceException of(Op op, String path, FileSystemException e) {
        return new WorkspaceException(op, path, errOf(e), e);
    }

    private static Err errOf(FileSystemException e) {
        if (e instanceof Failure failure) {
            return switch (failure.errno) {
                case OpenAt.ENOENT -> new NotFound();
                case OpenAt.ELOOP -> new SwappedForLink();
                case OpenAt.ENOTDIR -> new Changed(Change.DIRECTORY_REPLACED);
                case OpenAt.ENXIO -> new NotARegularFile();
                case OpenAt.EISDIR -> new IsDirectory();
                case OpenAt.EACCES, OpenAt.EPERM -> new PermissionDenied();
                case OpenAt.EEXIST -> new Changed(Change.NAME_TAKEN);
                default -> new Failed(e.getReason());
            };
        }
        if (e instanceof NoSuchFileException) {
            return new NotFound();
        }
        if (e instanceof FileAlreadyExistsException) {
            return new Changed(Change.NAME_TAKEN);
        }
        if (e instanceof AccessDeniedException) {
            return new PermissionDenied();
        }
        String reason = e.getReason() == null ? e.getClass().getSimpleName() : e.getReason();
        return reason.contains("Too many levels of symbolic links") ? new SwappedForLink() : new Failed(reason);
    }

    public Op op() {
        return op;
    }

    /** The name the operation was asked for, as given (the root's own path for {@link Op#OPEN}). */
    public String path() {
        return path;
    }

    public Err err() {
        return err;
    }

    public Reason reason() {
        return switch (err) {
            case InvalidPath _ -> Reason.INVALID_PATH;
            case AboveRoot _ -> Reason.ESCAPES_WORKSPACE;
            case AbsoluteLink _ -> Reason.ESCAPES_WORKSPACE;
            case SwappedForLink _ -> Reason.ESCAPES_WORKSPACE;
            case TooManyLinks _ -> Reason.TOO_MANY_LINKS;
            case NotFound _ -> Reason.NOT_FOUND;
            case ParentMissing _ -> Reason.PARENT_MISSING;
            case NotADirectory _ -> Reason.NOT_A_DIRECTORY;
            case IsDirectory _ -> Reason.IS_DIRECTORY;
            case NotARegularFile _ -> Reason.NOT_A_REGULAR_FILE;
            case TooLarge _ -> Reason.TOO_LARGE;
            case PermissionDenied _ -> Reason.PERMISSION_DENIED;
            case Changed _ -> Reason.CHANGED;
            case Protected _ -> Reason.PROTECTED;
            case Failed _ -> Reason.IO_ERROR;
            case NotSynced _ -> Reason.IO_ERROR;
        };
    }

    /** The failure in a few words, as Go's {@code syscall.Errno} strings are: for logs, not for the assistant. */
    private static String brief(Err err) {
        return switch (err) {
            case InvalidPath(Invalid why) -> "invalid path (" + why.name().toLowerCase(Locale.ROOT) + ")";
            case AboveRoot _ -> "leads above the workspace root";
            case AbsoluteLink(String link, _) -> "link " + Names.quoted(link) + " is absolute";
            case SwappedForLink _ -> "replaced by a symbolic link";
            case TooManyLinks(int limit) -> "more than " + limit + " symbolic links";
            case NotFound _ -> "not found";
            case ParentMissing(String missing) -> "directory " + Names.quoted(missing) + " does not exist";
            case NotADirectory(String which) -> (which == null ? "" : Names.quoted(which) + " is ") + "not a directory";
            case IsDirectory _ -> "is a directory";
            case NotARegularFile _ -> "not a regular file";
            case TooLarge(long size, long limit) ->
                    (size == SIZE_UNKNOWN ? "more than " + limit : size) + " bytes, over the limit of " + limit;
            case PermissionDenied _ -> "permission denied";
            case Changed(Change what) -> "changed during the operation (" + what.name().toLowerCase(Locale.ROOT) + ")";
            case Protected(ProtectedPaths.Kind kind, String resolved) -> Names.quoted(resolved) + " is protected (" + kind + ")";
            case Failed(String detail) -> detail;
            case NotSynced(String detail) -> "written, but its directory was not synced: " + detail;
        };
    }
}

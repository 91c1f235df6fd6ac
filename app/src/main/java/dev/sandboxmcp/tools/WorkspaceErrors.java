package dev.sandboxmcp.tools;

import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.WorkspaceException;
import dev.sandboxmcp.workspace.WorkspaceException.AboveRoot;
import dev.sandboxmcp.workspace.WorkspaceException.AbsoluteLink;
import dev.sandboxmcp.workspace.WorkspaceException.Changed;
import dev.sandboxmcp.workspace.WorkspaceException.Failed;
import dev.sandboxmcp.workspace.WorkspaceException.InvalidPath;
import dev.sandboxmcp.workspace.WorkspaceException.IsDirectory;
import dev.sandboxmcp.workspace.WorkspaceException.NotADirectory;
import dev.sandboxmcp.workspace.WorkspaceException.NotARegularFile;
import dev.sandboxmcp.workspace.WorkspaceException.NotFound;
import dev.sandboxmcp.workspace.WorkspaceException.NotSynced;
import dev.sandboxmcp.workspace.WorkspaceException.Op;
import dev.sandboxmcp.workspace.WorkspaceException.ParentMissing;
import dev.sandboxmcp.workspace.WorkspaceException.PermissionDenied;
import dev.sandboxmcp.workspace.WorkspaceException.Protected;
import dev.sandboxmcp.workspace.WorkspaceException.SwappedForLink;
import dev.sandboxmcp.workspace.WorkspaceException.TooLarge;
import dev.sandboxmcp.workspace.WorkspaceException.TooManyLinks;
import java.io.IOException;

/**
 * The words the assistant reads when the workspace refused or failed an operation: the facts a
 * {@link WorkspaceException} carries (operation, path, what went wrong), and what to do next,
 * which only the tools can say (the workspace names no tool).
 */
final class WorkspaceErrors {

    private WorkspaceErrors() {
    }

    /** A failed operation on {@code path}: the workspace's refusal, or any other I/O error as "could not {@code verb}". */
    static ToolRefusal refusal(String path, String verb, IOException e) {
        return new ToolRefusal(e instanceof WorkspaceException refused ? text(refused)
                : "could not " + verb + " " + Names.quoted(path) + ": " + e.getMessage());
    }

    /** Why a command's working directory {@code cwd} cannot be used. */
    static ToolRefusal cwd(String cwd, IOException e) {
        return new ToolRefusal(e instanceof WorkspaceException refused ? "cwd: " + text(refused)
                : "cwd " + Names.quoted(cwd) + " cannot be used: " + e.getMessage());
    }

    static String text(WorkspaceException e) {
        String path = Names.quoted(e.path());
        boolean directory = e.op() == Op.LIST || e.op() == Op.RESOLVE;
        return switch (e.err()) {
            case InvalidPath(var why) -> switch (why) {
                case EMPTY -> "path is empty; give a path relative to the workspace, e.g. 'src/Main.java'";
                case NUL_BYTE -> "path contains a NUL byte";
                case ABSOLUTE -> "absolute paths are not accepted: " + path + "; give a path relative to the workspace root";
            };
            case AboveRoot _ -> path + " leads outside the workspace; only paths beneath the workspace root are allowed";
            case AbsoluteLink(String link, String target) -> path + ": symbolic link " + Names.quoted(link)
                    + " points to the absolute path " + Names.quoted(target)
                    + ", outside the workspace; only links that stay inside are followed";
            case SwappedForLink _ -> path + " was replaced by a symbolic link during the operation; try again";
            case TooManyLinks(int limit) -> path + ": more than " + limit + " symbolic links (a loop?)";
            case NotFound _ -> (directory ? "no such directory: " : "no such file: ") + path;
            case ParentMissing(String missing) -> path + ": directory " + Names.quoted(missing)
                    + " does not exist; create it first (run_command mkdir -p)";
            case NotADirectory _ when e.op() == Op.OPEN -> "workspace " + e.path() + " is not a directory";
            case NotADirectory(String which) -> (which == null ? path : path + ": " + Names.quoted(which))
                    + " is not a directory" + (e.op() == Op.LIST ? "; to see a file, use read_file" : "");
            case IsDirectory _ -> path + " is a directory, not a file" + (e.op() == Op.READ ? "; list it with list_directory" : "");
            case NotARegularFile _ -> path + " is not a regular file (a device, socket or FIFO)";
            case TooLarge(long size, long limit) -> path + " is "
                    + (size == WorkspaceException.SIZE_UNKNOWN ? "more than " + limit : size)
                    + " bytes, over the limit of " + limit
                    + " bytes; read part of it with run_command instead (head -c, tail, sed -n)";
            case PermissionDenied _ -> path + ": permission denied";
            case Changed(var what) -> switch (what) {
                case DIRECTORY_REPLACED -> path + " changed during the operation (a directory on the way was replaced); "
                        + "try again";
                case NAME_TAKEN -> path + " changed while it was being written; try again";
                case CONTENT -> path + " changed while it was being edited (a command or another call wrote it); nothing "
                        + "was written. Read it again and repeat the edit.";
            };
            case Protected(var kind, String resolved) -> ProtectedFileRefusal.text(e.path(), kind, resolved);
            case Failed(String detail) -> "could not " + e.op().verb() + " " + path + ": " + detail
                    + (e.op() == Op.WRITE || e.op() == Op.EDIT ? "; the file was left unchanged" : "");
            case NotSynced(String detail) -> "wrote " + path + ", but its directory could not be synced to disk, so the "
                    + "change may not survive a crash: " + detail;
        };
    }
}

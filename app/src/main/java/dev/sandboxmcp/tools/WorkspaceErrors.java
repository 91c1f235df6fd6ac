package dev.sandboxmcp.tools;

import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;

/**
 * The words the assistant reads when the workspace refused or failed an operation: the facts the
 * {@link WorkspaceException} carries, and what to do next, which only the tools can say (the
 * workspace names no tool).
 */
final class WorkspaceErrors {

    private WorkspaceErrors() {
    }

    /** A failed operation on {@code path}: the workspace's refusal, or any other I/O error as "could not {@code verb}". */
    static ToolResponse failure(String path, String verb, IOException e) {
        return ToolResponse.failure(path, text(path, verb, e));
    }

    static String text(String path, String verb, IOException e) {
        return e instanceof WorkspaceException refusal ? text(refusal)
                : "could not " + verb + " " + Names.quoted(path) + ": " + e.getMessage();
    }

    /** Why a command's working directory {@code cwd} cannot be used. */
    static String cwd(String cwd, IOException e) {
        return e instanceof WorkspaceException refusal ? "cwd: " + text(refusal)
                : "cwd " + Names.quoted(cwd) + " cannot be used: " + e.getMessage();
    }

    static String text(WorkspaceException e) {
        return switch (e.reason()) {
            case TOO_LARGE -> Names.quoted(e.path()) + " is "
                    + (e.size() == WorkspaceException.SIZE_UNKNOWN ? "more than " + e.limit() : e.size())
                    + " bytes, over the limit of " + e.limit()
                    + " bytes; read part of it with run_command instead (head -c, tail, sed -n)";
            case PARENT_MISSING -> Names.quoted(e.path()) + ": directory " + Names.quoted(e.resolvedPath())
                    + " does not exist; create it first (run_command mkdir -p)";
            case PROTECTED -> ProtectedFileRefusal.text(e.path(), e.protectedKind(), e.resolvedPath());
            default -> e.getMessage();
        };
    }
}

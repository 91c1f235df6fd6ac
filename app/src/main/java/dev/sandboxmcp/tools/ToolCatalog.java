package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.workspace.Workspace;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;

/**
 * The tools this server offers, in the order clients list them: the one place they are named.
 * The server announces their definitions; the runner carries out their calls.
 */
public final class ToolCatalog {

    private ToolCatalog() {
    }

    /** Every tool's handler, with what it works on: the runner's side. */
    public static LocalTools local(Workspace workspace, CommandRunner runner, JobManager jobs, Limits limits) {
        return new LocalTools(handlers(workspace, runner, jobs, limits));
    }

    /**
     * Every tool's definition (name, title, description, schemas, hints), as the server announces
     * it: the server has no workspace and no commands, only these.
     */
    public static List<McpSchema.Tool> definitions(Limits limits) {
        // A tool's constructor only describes the tool; nothing is called on the missing parts.
        return handlers(null, null, null, limits).stream().map(SandboxTool::definition).toList();
    }

    /** The tools' names, for a client that checks a deployment offers each of them. */
    public static List<String> names() {
        return definitions(Limits.defaults()).stream().map(McpSchema.Tool::name).toList();
    }

    private static List<SandboxTool> handlers(Workspace workspace, CommandRunner runner, JobManager jobs, Limits limits) {
        return List.of(
                new RunCommandTool(runner, jobs, workspace, limits),
                new ReadFileTool(workspace, limits),
                new WriteFileTool(workspace, limits),
                new EditFileTool(workspace, limits),
                new ListDirectoryTool(workspace, limits),
                new StartJobTool(jobs, workspace),
                new JobOutputTool(jobs, limits),
                new StopJobTool(jobs),
                new ListJobsTool(jobs));
    }
}

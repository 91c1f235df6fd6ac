package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.workspace.Workspace;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;

/** The tools this server offers: their handlers for the runner, their definitions for the server. */
public final class ToolCatalog {

    private ToolCatalog() {
    }

    /** Every tool, with what it works on: the runner's side. */
    public static List<SandboxTool> handlers(Workspace workspace, CommandRunner runner, JobManager jobs, Limits limits) {
        return List.of(
                new RunCommandTool(runner, jobs, workspace, limits),
                new ReadFileTool(workspace, limits),
                new WriteFileTool(workspace, limits),
                new EditFileTool(workspace, limits),
                new ListDirectoryTool(workspace),
                new StartJobTool(jobs, workspace),
                new JobOutputTool(jobs, limits),
                new StopJobTool(jobs),
                new ListJobsTool(jobs));
    }

    /**
     * Every tool's definition (name, schemas, annotations, description), as the server announces
     * it: the server has no workspace and no commands, only these.
     */
    public static List<McpSchema.Tool> definitions(Limits limits) {
        // The constructors only build the definitions; nothing is called on the missing parts.
        return handlers(null, null, null, limits).stream().map(SandboxTool::definition).toList();
    }
}

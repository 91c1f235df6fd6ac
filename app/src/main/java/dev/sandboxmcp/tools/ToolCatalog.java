package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.workspace.Workspace;
import java.util.List;
import java.util.function.Function;

/**
 * The tools this server offers, in the order clients list them: the one place they are named,
 * and the dispatch table. A row is a tool: what it says of itself ({@link ToolSpec}: its
 * definition, the line in the instructions, its deadline rule, its target argument) and how the
 * runner makes its handler. The server is built from the specs alone ({@link #definitions}); only
 * the runner, which has the workspace and the commands, calls the handler factories
 * ({@link #local}). Adding a tool: its class (spec and handler) and its row here.
 */
public final class ToolCatalog {

    /** What handlers work on: only the runner has these. */
    public record Parts(Workspace workspace, CommandRunner commands, JobManager jobs, Limits limits) {
    }

    private record Row(Function<Limits, ToolSpec> spec, Function<Parts, SandboxTool> handler) {
    }

    private static final List<Row> ROWS = List.of(
            new Row(RunCommandTool::spec, p -> new RunCommandTool(p.commands(), p.jobs(), p.workspace(), p.limits())),
            new Row(ReadFileTool::spec, p -> new ReadFileTool(p.workspace(), p.limits())),
            new Row(WriteFileTool::spec, p -> new WriteFileTool(p.workspace(), p.limits())),
            new Row(EditFileTool::spec, p -> new EditFileTool(p.workspace(), p.limits())),
            new Row(ListDirectoryTool::spec, p -> new ListDirectoryTool(p.workspace(), p.limits())),
            new Row(StartJobTool::spec, p -> new StartJobTool(p.jobs(), p.workspace(), p.limits())),
            new Row(JobOutputTool::spec, p -> new JobOutputTool(p.jobs(), p.limits())),
            new Row(JobInputTool::spec, p -> new JobInputTool(p.jobs(), p.limits())),
            new Row(StopJobTool::spec, p -> new StopJobTool(p.jobs())),
            new Row(ListJobsTool::spec, p -> new ListJobsTool(p.jobs(), p.limits())));

    private ToolCatalog() {
    }

    /** Every tool's handler, with what it works on: the runner's side. */
    public static LocalTools local(Parts parts) {
        return new LocalTools(ROWS.stream().map(row -> row.handler().apply(parts)).toList());
    }

    /** Every tool as the server knows it: definitions and call rules, no handler. */
    public static ToolDefinitions definitions(Limits limits) {
        return new ToolDefinitions(limits, ROWS.stream().map(row -> row.spec().apply(limits)).toList());
    }

    /** The tools' names, for a client that checks a deployment offers each of them. */
    public static List<String> names() {
        return definitions(Limits.defaults()).names();
    }
}

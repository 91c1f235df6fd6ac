package dev.sandboxmcp.tools;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tools' handlers, called in this process: where the workspace and the commands are. The one
 * place a handler's {@link ToolRefusal}, or a bug, becomes a result with {@code isError}: nothing
 * reaches the SDK as an exception.
 */
public final class LocalTools implements ToolExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(LocalTools.class);
    /** How the JVM's OutOfMemoryError begins when the kernel refuses a new thread (os::native_thread_creation_failed_msg). */
    static final String NO_THREAD = "unable to create native thread";

    private final Map<String, SandboxTool> tools = new LinkedHashMap<>();

    public LocalTools(List<SandboxTool> tools) {
        tools.forEach(tool -> this.tools.put(tool.definition().name(), tool));
    }

    @Override
    public ToolResponse execute(String name, Map<String, Object> arguments, Progress progress) {
        SandboxTool tool = tools.get(name);
        if (tool == null) {
            return ToolResponse.failure(null, "unknown tool '" + name + "'");
        }
        String target = tool.target(arguments);
        try {
            return tool.call(new ToolArguments(arguments), progress);
        } catch (ToolRefusal e) {
            return ToolResponse.failure(target, e.getMessage());
        } catch (RuntimeException | Error e) {
            if (e instanceof OutOfMemoryError && String.valueOf(e.getMessage()).startsWith(NO_THREAD)) {
                // Not a bug: the container's pids limit counts the runner's threads with the commands' processes.
                LOG.warn("tool {}: {}", name, e.getMessage());
                return ToolResponse.failure(target, "the runner could not start a thread for " + name + ": the "
                        + "container's limit on processes and threads (pids_limit) is taken by what commands and jobs "
                        + "left running; stop a job (list_jobs, stop_job) or wait for them to end, then try again");
            }
            LOG.error("tool {} failed unexpectedly", name, e);
            return ToolResponse.failure(target, "internal error in " + name + " (" + e.getClass().getSimpleName()
                    + "); the server logged the details. Try again, or try another way.");
        }
    }
}

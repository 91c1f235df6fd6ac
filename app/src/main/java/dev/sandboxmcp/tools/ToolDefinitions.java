package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The server's view of the catalog: every tool's definition and what the server needs to know of
 * a call without carrying it out (its deadline, whether the client is watched, its target). No
 * workspace and no commands: the runner alone builds handlers ({@link ToolCatalog#local}).
 */
public final class ToolDefinitions {

    private final Limits limits;
    private final Map<String, ToolSpec> specs = new LinkedHashMap<>();

    ToolDefinitions(Limits limits, List<ToolSpec> specs) {
        this.limits = limits;
        specs.forEach(spec -> this.specs.put(spec.name(), spec));
    }

    /** The tools as the server announces them, in the catalog's order. */
    public List<McpSchema.Tool> tools() {
        return specs.values().stream().map(ToolSpec::definition).toList();
    }

    public List<String> names() {
        return List.copyOf(specs.keySet());
    }

    /** The length of the longest tool name: a call naming anything longer names no tool. */
    public int longestName() {
        return specs.keySet().stream().mapToInt(String::length).max().orElse(0);
    }

    /**
     * How long the server waits for the runner's answer to one call, all told: a command's answer
     * comes at its deadline or at the call budget, whichever is first (then it goes on as a job).
     */
    public Duration deadline(String tool, Map<String, Object> arguments) {
        return lengthOf(tool).deadline(limits, arguments);
    }

    /** Whether a call of {@code tool} may last long enough that a client dropping it must be watched for. */
    public boolean watchesTheClient(String tool) {
        return lengthOf(tool) == CallLength.OWN_TIMEOUT;
    }

    /** What a call is about, from its arguments: the value of the tool's target argument, or null. */
    public String target(String tool, Map<String, Object> arguments) {
        return targetOf(specs.get(tool), arguments);
    }

    static String targetOf(ToolSpec spec, Map<String, Object> arguments) {
        return spec != null && spec.target() != null && arguments.get(spec.target()) instanceof String value ? value : null;
    }

    /** The "Tools:" lines of the server's instructions, each tool's own, in the catalog's order. */
    String instructionLines() {
        StringBuilder lines = new StringBuilder();
        specs.values().stream().map(ToolSpec::instructions).filter(Objects::nonNull)
                .forEach(line -> lines.append("- ").append(line).append('\n'));
        return lines.toString();
    }

    private CallLength lengthOf(String tool) {
        ToolSpec spec = specs.get(tool);
        return spec == null ? CallLength.BRIEF : spec.length();
    }
}

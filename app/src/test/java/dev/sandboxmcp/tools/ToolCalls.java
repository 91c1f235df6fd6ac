package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

/** Calls a tool's handler the way the runner does, through {@link LocalTools}: a refusal comes back as a result. */
final class ToolCalls {

    private ToolCalls() {
    }

    static ToolResponse call(SandboxTool tool, Map<String, Object> arguments) {
        return new LocalTools(List.of(tool)).execute(tool.definition().name(), arguments, Progress.NONE);
    }

    /** Lines {@code offset} to {@code offset + limit - 1} of {@code path}, read without error. */
    static ToolResponse page(ReadFileTool read, String path, long offset, long limit) {
        ToolResponse response = call(read, Map.of("path", path, "offset", offset, "limit", limit));
        assertThat(response.error()).as(response.text()).isFalse();
        return response;
    }
}

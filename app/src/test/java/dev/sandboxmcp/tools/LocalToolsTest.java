package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a tool that throws becomes: a refusal in its own words, a thread the kernel refused, or a bug. */
class LocalToolsTest {

    static SandboxTool throwing(Throwable thrown) {
        return new SandboxTool() {
            @Override
            public McpSchema.Tool definition() {
                return McpSchema.Tool.builder().name("probe").inputSchema(new McpSchema.JsonSchema("object", Map.of(), List.of(),
                        false, null, null)).build();
            }

            @Override
            public ToolResponse call(ToolArguments arguments, Progress progress) {
                if (thrown instanceof RuntimeException runtime) {
                    throw runtime;
                }
                throw (Error) thrown;
            }
        };
    }

    static String text(ToolResponse response) {
        return response.text();
    }

    @Test
    void aThreadTheKernelRefusedIsSaidAsSuchAndAnyOtherErrorIsInternal() {
        // What the JVM throws when the container's pids limit is reached (a fork burst's leftovers).
        ToolResponse noThread = new LocalTools(List.of(throwing(new OutOfMemoryError(LocalTools.NO_THREAD
                + ": possibly out of memory or process/resource limits reached")))).execute("probe", Map.of(), null);
        assertThat(noThread.error()).isTrue();
        assertThat(text(noThread)).startsWith("the runner could not start a thread for probe: ").contains("pids_limit")
                .doesNotContain("internal error");
        ToolResponse heap = new LocalTools(List.of(throwing(new OutOfMemoryError("Java heap space")))).execute("probe",
                Map.of(), null);
        assertThat(text(heap)).startsWith("internal error in probe (OutOfMemoryError)");
        ToolResponse bug = new LocalTools(List.of(throwing(new IllegalStateException("x")))).execute("probe", Map.of(), null);
        assertThat(text(bug)).startsWith("internal error in probe (IllegalStateException)");
    }
}

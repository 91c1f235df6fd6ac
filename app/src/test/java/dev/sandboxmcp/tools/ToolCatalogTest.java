package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.config.Limits;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ToolCatalogTest {

    static Map<String, McpSchema.Tool> byName(Limits limits) {
        return ToolCatalog.definitions(limits).stream().collect(Collectors.toMap(McpSchema.Tool::name, Function.identity()));
    }

    @Test
    void eachToolIsListedOnceUnderTheNameItsDefinitionGives() {
        List<String> names = ToolCatalog.names();
        assertThat(names).doesNotHaveDuplicates().hasSize(9)
                .isEqualTo(ToolCatalog.definitions(Limits.defaults()).stream().map(McpSchema.Tool::name).toList());
        ToolCatalog.definitions(Limits.defaults()).forEach(tool -> {
            assertThat(tool.title()).as(tool.name()).isNotBlank();
            assertThat(tool.annotations().title()).as(tool.name() + ": the title is the tool's own, not repeated").isNull();
        });
    }

    @Test
    void descriptionsStateTheBoundsTheServerIsConfiguredWith() throws Exception {
        Limits limits = Config.fromEnvironment(Map.of("MCP_AUTH_TOKEN", "t".repeat(Config.MIN_TOKEN_LENGTH),
                "MCP_RUNNER_SOCKET", "/run/test.sock", "MCP_COMMAND_TIMEOUT_MAX_SECONDS", "77", "MCP_CALL_BUDGET_SECONDS", "33",
                "MCP_OUTPUT_VIEW_BYTES", "9216", "MCP_FILE_LIMIT_BYTES", "307200")).limits();
        Map<String, McpSchema.Tool> tools = byName(limits);
        assertThat(tools.get("run_command").description()).contains("Still running after 33 s").contains("Shows 9 KiB of output");
        assertThat(tools.get("run_command").inputSchema().toString()).contains("maximum=77");
        assertThat(tools.get("write_file").description()).contains("at most 300 KiB per call");
        assertThat(tools.get("edit_file").description()).contains("at most 300 KiB");
        assertThat(tools.get("edit_file").outputSchema().toString())
                .contains("cut (at " + Limits.defaults().diffChars() / 1024 + " KiB)");
        assertThat(tools.get("list_directory").description()).contains("at most " + limits.listEntries() + " entries");
    }
}

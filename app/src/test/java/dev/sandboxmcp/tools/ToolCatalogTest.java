package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.audit.AuditLog;
import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Names;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ToolCatalogTest {

    static Map<String, McpSchema.Tool> byName(Limits limits) {
        return ToolCatalog.definitions(limits).tools().stream()
                .collect(Collectors.toMap(McpSchema.Tool::name, Function.identity()));
    }

    @Test
    void eachToolIsListedOnceUnderTheNameItsDefinitionGives() {
        List<String> names = ToolCatalog.names();
        assertThat(names).doesNotHaveDuplicates().hasSize(10)
                .isEqualTo(ToolCatalog.definitions(Limits.defaults()).tools().stream().map(McpSchema.Tool::name).toList());
        ToolCatalog.definitions(Limits.defaults()).tools().forEach(tool -> {
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

    @Test
    void theServerKnowsEachCallsDeadlineWatchAndTargetFromTheCatalogAlone() {
        Limits limits = Limits.defaults();
        ToolDefinitions tools = ToolCatalog.definitions(limits);
        Duration margin = limits.killGrace().plusSeconds(15);
        assertThat(tools.deadline("run_command", Map.of("command", "true", "timeout_seconds", 7)))
                .isEqualTo(Duration.ofSeconds(7).plus(margin));
        assertThat(tools.deadline("run_command", Map.of("command", "true")))
                .isEqualTo(Duration.ofSeconds(Math.min(limits.defaultTimeout().toSeconds(), limits.callBudget().toSeconds()))
                        .plus(margin));
        assertThat(tools.deadline("run_command", Map.of("command", "true", "timeout_seconds", 100_000)))
                .as("at most the call budget: then the command goes on as a job").isEqualTo(limits.callBudget().plus(margin));
        List<String> brief = new java.util.ArrayList<>(tools.names());
        brief.remove("run_command");
        brief.add("no_such_tool");
        for (String name : brief) {
            assertThat(tools.deadline(name, Map.of("timeout_seconds", 100_000))).as(name).isEqualTo(margin.plusSeconds(15));
            assertThat(tools.watchesTheClient(name)).as(name).isFalse();
        }
        assertThat(tools.watchesTheClient("run_command")).isTrue();

        Map<String, Object> all = Map.of("command", "make", "path", "src/A.java", "id", "job-1");
        assertThat(tools.names()).allSatisfy(name -> assertThat(tools.target(name, all)).as(name).isEqualTo(switch (name) {
            case "run_command", "start_job" -> "make";
            case "job_output", "job_input", "stop_job" -> "job-1";
            case "list_jobs" -> null;
            default -> "src/A.java";
        }));
        assertThat(tools.target("read_file", Map.of("path", 3))).as("only a string names a target").isNull();
    }

    @Test
    void theInstructionsHoldEachToolsOwnLineAndNameEveryTool() {
        String instructions = ServerInstructions.text(Limits.defaults(), "");
        assertThat(ToolCatalog.names()).allSatisfy(name -> assertThat(instructions).contains(name));
        assertThat(instructions).contains("- run_command: /bin/sh -lc in the workspace root")
                .contains("- read_file: UTF-8 text in pages of " + Limits.defaults().pageLines() + " lines")
                .contains("- start_job / job_output / stop_job / list_jobs: background work")
                .contains("- list_directory: names, kinds and sizes").doesNotContain("%");
    }

    /** Every argument that names a path, by tool. */
    static final Map<String, String> PATH_ARGUMENTS = Map.of("read_file", "path", "write_file", "path", "edit_file", "path",
            "list_directory", "path", "run_command", "cwd", "start_job", "cwd");

    @Test
    void everyPathArgumentIsBoundedByPathMax() {
        Map<String, McpSchema.Tool> tools = byName(Limits.defaults());
        PATH_ARGUMENTS.forEach((tool, argument) -> assertThat(properties(tools.get(tool)).get(argument))
                .as("%s.%s", tool, argument).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                .containsEntry("maxLength", Names.MAX_PATH_CHARS));
        tools.values().forEach(tool -> properties(tool).forEach((name, schema) -> {
            if (name.equals("path") || name.equals("cwd")) {
                assertThat(PATH_ARGUMENTS).as("a path argument not listed here: %s.%s", tool.name(), name)
                        .containsEntry(tool.name(), (String) name);
            }
        }));
    }

    @Test
    void aPathPastPathMaxIsRefusedBeforeTheRunnerSeesItAndNotEchoed() {
        List<String> executed = new ArrayList<>();
        ToolExecutor executor = (tool, arguments, progress) -> {
            executed.add(tool + " " + String.valueOf(arguments.get(PATH_ARGUMENTS.get(tool))).length());
            return ToolResponse.failure(null, "no such file");
        };
        ByteArrayOutputStream audit = new ByteArrayOutputStream();
        ToolDispatcher dispatcher = new ToolDispatcher(ToolCatalog.definitions(Limits.defaults()), executor,
                new AuditLog(new PrintStream(audit, true, StandardCharsets.UTF_8)));
        Map<String, McpSchema.Tool> tools = byName(Limits.defaults());
        String atTheLimit = "\u0101" + "p".repeat(Names.MAX_PATH_CHARS - 1);
        String past = atTheLimit + "p";
        for (Map.Entry<String, String> argument : PATH_ARGUMENTS.entrySet()) {
            String tool = argument.getKey();
            Map<String, Object> required = switch (tool) {
                case "write_file" -> Map.of("content", "");
                case "edit_file" -> Map.of("old_text", "a", "new_text", "b");
                case "run_command", "start_job" -> Map.of("command", "true");
                default -> Map.of();
            };
            java.util.HashMap<String, Object> arguments = new java.util.HashMap<>(required);
            arguments.put(argument.getValue(), atTheLimit);
            McpSchema.CallToolResult passed = dispatcher.dispatch(tools.get(tool),
                    McpSchema.CallToolRequest.builder().name(tool).arguments(new java.util.HashMap<>(arguments)).build(),
                    null, Progress.NONE);
            assertThat(executed).as(tool + " at the limit: carried out").containsExactly(tool + " " + Names.MAX_PATH_CHARS);
            assertThat(text(passed)).isEqualTo("no such file");
            executed.clear();
            arguments.put(argument.getValue(), past);
            McpSchema.CallToolResult refused = dispatcher.dispatch(tools.get(tool),
                    McpSchema.CallToolRequest.builder().name(tool).arguments(arguments).build(), null, Progress.NONE);
            assertThat(executed).as(tool + " one past the limit: refused before the executor").isEmpty();
            assertThat(refused.isError()).isTrue();
            assertThat(text(refused)).as(tool).startsWith("invalid arguments for " + tool + ": ")
                    .containsAnyOf("at most " + Names.MAX_PATH_CHARS, "at most 4,096").doesNotContain("pppppppp").hasSizeLessThan(400);
        }
    }

    /** A job id past 64 characters (ids are a dozen) is refused before the runner sees it, never echoed back whole. */
    @Test
    void aJobIdPastItsBoundIsRefusedBeforeTheRunnerSeesIt() {
        List<String> executed = new ArrayList<>();
        ToolExecutor executor = (tool, arguments, progress) -> {
            executed.add(tool);
            return ToolResponse.failure(null, "no job");
        };
        ToolDispatcher dispatcher = new ToolDispatcher(ToolCatalog.definitions(Limits.defaults()), executor,
                new AuditLog(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
        Map<String, McpSchema.Tool> tools = byName(Limits.defaults());
        for (String tool : List.of("job_output", "job_input", "stop_job")) {
            Map<String, Object> arguments = new java.util.HashMap<>(Map.of("id", "j".repeat(64)));
            McpSchema.CallToolResult passed = dispatcher.dispatch(tools.get(tool),
                    McpSchema.CallToolRequest.builder().name(tool).arguments(new java.util.HashMap<>(arguments)).build(),
                    null, Progress.NONE);
            assertThat(text(passed)).as(tool).isEqualTo("no job");
            arguments.put("id", "j".repeat(8 * 1024 * 1024));
            McpSchema.CallToolResult refused = dispatcher.dispatch(tools.get(tool),
                    McpSchema.CallToolRequest.builder().name(tool).arguments(arguments).build(), null, Progress.NONE);
            assertThat(refused.isError()).isTrue();
            assertThat(text(refused)).as(tool).startsWith("invalid arguments for " + tool + ": ").hasSizeLessThan(400);
        }
        assertThat(executed).containsExactly("job_output", "job_input", "stop_job");
    }

    /** What the runner answers is checked against the tool's output schema: off it, the client gets an error, never the result. */
    @Test
    void aResultOffItsOutputSchemaBecomesAnError() {
        Map<String, Object> wellFormed = new java.util.HashMap<>(Map.of("path", "a.txt", "content", "x\n", "bytes", 2,
                "first_line", 1, "lines", 1, "total_lines", 1, "total_lines_at_least", false, "has_more", false,
                "line_truncated", false));
        Map<String, Object> wrongType = new java.util.HashMap<>(wellFormed);
        wrongType.put("bytes", "two");
        Map<String, Object> missing = new java.util.HashMap<>(wellFormed);
        missing.remove("content");
        List<Map<String, Object>> answers = new ArrayList<>(java.util.Arrays.asList(wellFormed, wrongType, missing, null));
        ToolExecutor executor = (tool, arguments, progress) -> ToolResponse.success("x\n", answers.removeFirst(), "a.txt", 2L);
        ToolDispatcher dispatcher = new ToolDispatcher(ToolCatalog.definitions(Limits.defaults()), executor,
                new AuditLog(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
        McpSchema.Tool read = byName(Limits.defaults()).get("read_file");
        McpSchema.CallToolRequest request = McpSchema.CallToolRequest.builder().name("read_file")
                .arguments(new java.util.HashMap<>(Map.of("path", "a.txt"))).build();
        McpSchema.CallToolResult passed = dispatcher.dispatch(read, request, null, Progress.NONE);
        assertThat(passed.isError()).isFalse();
        assertThat(passed.structuredContent()).isEqualTo(wellFormed);
        for (String off : List.of("a wrong type", "a field missing", "no structured content")) {
            McpSchema.CallToolResult refused = dispatcher.dispatch(read, request, null, Progress.NONE);
            assertThat(refused.isError()).as(off).isTrue();
            assertThat(refused.structuredContent()).as(off).isNull();
            assertThat(text(refused)).as(off).contains("read_file produced a malformed result");
        }
    }

    static Map<?, ?> properties(McpSchema.Tool tool) {
        return (Map<?, ?>) tool.inputSchema().get("properties");
    }

    static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().getFirst()).text();
    }
}

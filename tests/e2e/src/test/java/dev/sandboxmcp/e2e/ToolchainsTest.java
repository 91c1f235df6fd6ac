package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A developer's first request, in the pair as deployed (no network): small real projects created
 * in the workspace are built and tested with the runner's toolchains, the home volume keeps the
 * caches across a restart, and the runner stays locked down with its toolchains in it.
 */
@RequiresDocker
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ToolchainsTest {

    static ComposeDeployment deployment;
    static McpSyncClient client;
    static String toolchains;

    @BeforeAll
    static void start() throws Exception {
        deployment = ComposeDeployment.start("toolchains");
        client = deployment.streamableClient();
        toolchains = Commands.run(List.of("docker", "image", "inspect", "--format",
                "{{index .Config.Labels \"dev.sandboxmcp.toolchains\"}}", ComposeDeployment.RUNNER_IMAGE), 30).output().strip();
    }

    @AfterAll
    static void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (deployment != null) {
            deployment.close();
        }
    }

    /**
     * Runs {@code command} and returns its stdout and stderr, failing unless it exits 0 with the
     * whole result (a stop at the disk floor, say, is in its fields, not in the output).
     */
    static String build(String command) {
        Map<String, Object> result = Mcp.run(client, command + " 2>&1", 110);
        assertThat(result.get("exit_code")).as("%s\n%s", command, result).isEqualTo(0);
        return (String) result.get("stdout");
    }

    /** Until a command runs again: /healthz may still report the runner's state from before a restart. */
    static void awaitCommands(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest("run_command",
                    Map.of("command", "true")));
            if (!Boolean.TRUE.equals(result.isError()) || System.nanoTime() > deadline) {
                assertThat(result.isError()).as("the runner is back: %s", result.content()).isNotEqualTo(Boolean.TRUE);
                return;
            }
            Thread.sleep(250);
        }
    }

    @Test
    @Order(1)
    void theInstructionsNameTheToolchainsOfTheImage() {
        assertThat(toolchains).as("the runner image's toolchain label").contains("go ").contains("node ")
                .contains("python ").contains("gcc ");
        assertThat(client.getServerInstructions()).contains("Toolchains: " + toolchains);
    }

    @Test
    @Order(2)
    void aGoModuleIsTestedAndItsBuildCacheSurvivesARestart() throws Exception {
        build("mkdir -p gomod && cd gomod && printf 'module example.com/gomod\\n\\ngo 1.24\\n' > go.mod && "
                + "printf 'package gomod\\n\\nfunc Add(a, b int) int { return a + b }\\n' > add.go && "
                + "printf 'package gomod\\n\\nimport \"testing\"\\n\\nfunc TestAdd(t *testing.T) {\\n"
                + "\\tif Add(2, 3) != 5 {\\n\\t\\tt.Fatal(\"wrong\")\\n\\t}\\n}\\n' > add_test.go");
        assertThat(build("cd gomod && go test ./...")).contains("ok").contains("example.com/gomod");
        assertThat(deployment.home.resolve(".cache/go-build")).as("the Go build cache, in the home volume").isDirectory();

        Commands.Result restart = Commands.run(List.of("docker", "restart", "-t", "5", deployment.runner), 60);
        assertThat(restart.exitCode()).as(restart.output()).isZero();
        awaitCommands(Duration.ofSeconds(60));

        assertThat(build("cd gomod && go test ./...")).as("a cache hit after the restart").contains("(cached)");
    }

    @Test
    @Order(3)
    void aNodePackagePythonPackageAndCProgramBuildAndPassTheirTests() throws Exception {
        assertThat(build("mkdir -p nodepkg/test && cd nodepkg && "
                + "printf '{\"name\":\"nodepkg\",\"version\":\"1.0.0\"}\\n' > package.json && "
                + "printf 'exports.add = (a, b) => a + b;\\n' > index.js && "
                + "printf \"const test = require('node:test');\\nconst assert = require('node:assert');\\n"
                + "const { add } = require('../index.js');\\n"
                + "test('adds', () => assert.strictEqual(add(2, 3), 5));\\n\" > test/add.test.js && "
                + "node --test")).contains("pass 1").contains("fail 0");

        assertThat(build("mkdir -p pypkg/calc && cd pypkg && : > calc/__init__.py && "
                + "printf 'def add(a, b):\\n    return a + b\\n' > calc/ops.py && "
                + "printf 'import unittest\\nfrom calc.ops import add\\n\\nclass AddTest(unittest.TestCase):\\n"
                + "    def test_add(self):\\n        self.assertEqual(add(2, 3), 5)\\n' > test_ops.py && "
                + "python3 -m unittest -v")).contains("test_add").contains("OK");

        assertThat(build("mkdir -p cprog && cd cprog && "
                + "printf '#include <stdio.h>\\nint main(void) { printf(\"sum=%%d\\\\n\", 2 + 3); return 0; }\\n' > main.c && "
                + "printf 'hello: main.c\\n\\t$(CC) -O2 -o $@ main.c\\n' > Makefile && make && ./hello")).contains("sum=5");
        Path binary = deployment.workspace.resolve("cprog/hello");
        assertThat(Files.getAttribute(binary, "unix:uid")).as("the build's output belongs to the host user")
                .isEqualTo(deployment.uid);
        assertThat(Files.getAttribute(deployment.workspace.resolve("gomod/go.mod"), "unix:uid")).isEqualTo(deployment.uid);
    }

    @Test
    @Order(4)
    void withTheJavaToolchainAClassIsCompiledAndRun() {
        assumeTrue(toolchains.contains("java"), "SKIPPED: the runner image was built without the java toolchain ("
                + toolchains + "); build it with SANDBOX_TOOLCHAINS=go,node,python,c,java to run this test");
        assertThat(build("mkdir -p javaprog && cd javaprog && "
                + "printf 'public class Hello { public static void main(String[] a) { "
                + "System.out.println(\"sum=\" + (2 + 3)); } }\\n' > Hello.java && "
                + "javac Hello.java && java Hello")).contains("sum=5");
    }

    @Test
    @Order(5)
    void theRunnerStaysLockedDownWithItsToolchains() {
        String report = build("touch /usr/local/planted 2>/dev/null && echo root-writable; "
                + "cp /bin/true /tmp/t && { /tmp/t 2>/dev/null && echo tmp-executes; rm -f /tmp/t; }; "
                + "find / -xdev -type f -perm /6000 2>/dev/null | sed 's/^/setid: /'; "
                + "grep CapEff /proc/self/status; "
                + "mknod $HOME/dev c 1 3 2>/dev/null && echo home-takes-devices; "
                + "command -v javac >/dev/null || ! command -v java >/dev/null || echo server-runtime-on-path; "
                + "echo checked");
        assertThat(report).isEqualTo("CapEff:\t0000000000000000\nchecked\n");
    }
}

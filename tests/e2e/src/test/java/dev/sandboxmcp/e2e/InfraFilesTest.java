package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** The versioned infrastructure files: rendered, parsed and checked for what the route needs. */
class InfraFilesTest {

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value, String key) {
        return (Map<String, Object>) ((Map<String, Object>) value).get(key);
    }

    @Test
    @SuppressWarnings("unchecked")
    void traefikRouteKeepsThePrefixAndUsesTheTailscaleResolver() throws Exception {
        Commands.Result rendered = Commands.run(List.of("bash", Repo.path("infra/traefik/render.sh").toString(),
                "node.tail1234.ts.net"), Map.of("SANDBOX_PORT", "18080"), Repo.root(), 30);
        assertThat(rendered.exitCode()).as(rendered.output()).isZero();
        Map<String, Object> http = map(new Yaml().load(rendered.output()), "http");
        Map<String, Object> router = map(map(http, "routers"), "sandbox-mcp");
        assertThat(router.get("rule")).isEqualTo("Host(`node.tail1234.ts.net`) && PathPrefix(`/mcp-sandbox`)");
        assertThat((List<String>) router.get("entryPoints")).containsExactly("websecure");
        assertThat(map(router, "tls")).containsEntry("certResolver", "tailscale");
        assertThat(router).doesNotContainKey("middlewares");
        Map<String, Object> service = map(map(http, "services"), "sandbox-mcp");
        List<Map<String, Object>> servers = (List<Map<String, Object>>) map(service, "loadBalancer").get("servers");
        assertThat(servers).containsExactly(Map.of("url", "http://127.0.0.1:18080"));
        assertThat(http).doesNotContainKey("middlewares");
        String settings = rendered.output().lines().filter(l -> !l.strip().startsWith("#"))
                .reduce("", (a, b) -> a + b + "\n");
        assertThat(settings).doesNotContain("stripPrefix").doesNotContain("compress").doesNotContain("${");
    }

    @Test
    void renderRefusesWhatIsNotAHostName() throws Exception {
        for (String bad : List.of("", "node`) || Host(`evil", "https://node.ts.net", "node.ts.net/x", "a b")) {
            Commands.Result result = Commands.run(List.of("bash", Repo.path("infra/traefik/render.sh").toString(), bad),
                    Map.of(), Repo.root(), 30);
            assertThat(result.exitCode()).as("host %s", bad).isEqualTo(2);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void traefikStaticExampleTurnsOffTheReadTimeoutOnTheMcpEntrypoint() throws Exception {
        Map<String, Object> config = new Yaml().load(Files.readString(Repo.path("infra/traefik/traefik.example.yml")));
        Map<String, Object> websecure = map(map(config, "entryPoints"), "websecure");
        assertThat(map(map(websecure, "transport"), "respondingTimeouts")).containsEntry("readTimeout", "0s");
        assertThat(map(config, "certificatesResolvers")).containsKey("tailscale");
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeFileHasTheLockedDownFlags() throws Exception {
        Map<String, Object> compose = new Yaml().load(Files.readString(Repo.path("infra/compose/compose.yaml")));
        for (String name : List.of("server", "runner")) {
            Map<String, Object> service = map(map(compose, "services"), name);
            // The runner's image brings its own init (PID 1, infra/image/runner-init): Docker's must not replace it.
            assertThat(service).as(name).containsEntry("read_only", true).containsEntry("init", name.equals("server"))
                    .containsEntry("restart", "unless-stopped")
                    .doesNotContainKeys("privileged", "cap_add", "env_file", "pid", "ipc");
            assertThat((List<String>) service.get("cap_drop")).containsExactly("ALL");
            assertThat((List<String>) service.get("security_opt")).containsExactly("no-new-privileges:true");
            assertThat((List<String>) service.get("tmpfs")).singleElement().asString().startsWith("/tmp:rw,noexec,nosuid,nodev,");
            assertThat(map(service, "healthcheck").get("test").toString()).contains("/app/bin/healthcheck.sh", name);
        }
        Map<String, Object> runner = map(map(compose, "services"), "runner");
        assertThat(runner).containsEntry("pids_limit", 128).containsEntry("mem_limit", "1g").containsEntry("cpus", 2)
                .containsEntry("network_mode", "none").doesNotContainKeys("ports", "networks");
        assertThat((List<String>) runner.get("volumes")).hasSize(3).anyMatch(v -> v.endsWith(":/workspace:rw"))
                .anyMatch(v -> v.equals("channel:/run/sandbox-mcp:ro")).anyMatch(v -> v.equals("home:/home/sandbox:nocopy"));
        // The home volume is made by `make up` and outlives `make down --volumes`.
        assertThat(map(map(compose, "volumes"), "home")).containsEntry("external", true);
        // No token, and no limit: the server states every limit to the runner when it connects.
        assertThat(map(runner, "environment")).containsOnlyKeys("MCP_RUNNER_SWEEP_ALL");
        Map<String, Object> server = map(map(compose, "services"), "server");
        assertThat(server).containsEntry("pids_limit", 64).containsEntry("mem_limit", "512m");
        assertThat((List<String>) server.get("volumes")).containsExactly("channel:/run/sandbox-mcp");
        assertThat((List<String>) server.get("ports")).containsExactly("127.0.0.1:${SANDBOX_PORT:-18080}:8000");
        assertThat(server.get("user").toString()).doesNotContain("SANDBOX_UID");
        assertThat(map(map(map(compose, "volumes"), "channel"), "driver_opts")).containsEntry("type", "tmpfs");
        Map<String, Object> network = map(map(compose, "networks"), "sandbox-mcp-net");
        assertThat(map(network, "driver_opts")).containsEntry("com.docker.network.bridge.enable_icc", "false")
                .containsEntry("com.docker.network.bridge.enable_ip_masquerade", "false");
    }

    @Test
    void shellScriptsAreShellcheckClean() throws Exception {
        boolean installed;
        try {
            installed = Commands.run(List.of("shellcheck", "--version"), 30).exitCode() == 0;
        } catch (java.io.IOException e) {
            installed = false;
        }
        assumeTrue(installed, "SKIPPED: shellcheck is not installed (apt-get install shellcheck; .ci/run installs it)");
        // The Makefile finds every script (make lint); this test holds no list of its own.
        Commands.Result result = Commands.run(List.of("make", "--no-print-directory", "lint"), Map.of(), Repo.root(), 120);
        assertThat(result.output()).contains("infra/host/deps.sh", "infra/image/build-base.sh", ".ci/run");
        assertThat(result.exitCode()).as(result.output()).isZero();
    }

    @Test
    void makeUpStopsTheOldRunnerBeforeItChecksTheRepositories() throws Exception {
        // A runner left running could swap a path protect-git.sh has checked for a link or a FIFO
        // before compose mounts it (a bind mount follows a link on the host). make's dry run
        // prints the recipe in the order it runs; the images and the token are taken as made.
        Commands.Result dryRun = Commands.run(List.of("make", "--no-print-directory", "-n", "-o", "image", "-o", "token",
                "up"), Map.of(), Repo.root(), 60);
        assertThat(dryRun.exitCode()).as(dryRun.output()).isZero();
        List<String> lines = dryRun.output().lines().toList();
        int check = indexOf(lines, "infra/compose/check-workspace.sh ");
        int stop = indexOf(lines, " stop runner");
        assertThat(check).as("the workspace is checked before anything is started").isNotNegative().isLessThan(stop);
        int protect = indexOf(lines, "infra/compose/protect-git.sh ");
        int start = indexOf(lines, " up -d ");
        assertThat(stop).as(dryRun.output()).isNotNegative().isLessThan(protect);
        assertThat(protect).isLessThan(start);
        // Found by the project's labels: the runner of a deployment with egress too.
        assertThat(lines.get(stop)).contains(" -p sandbox-mcp -f infra/compose/compose.yaml stop runner");
    }

    @Test
    void theWorkspaceMayHoldNeitherThisCheckoutNorAnyHomeNorYourPathNorTheAuditsRecord(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path temp) throws Exception {
        // Any command in the sandbox may rewrite the workspace: a Makefile or compose file there
        // would run on the next make up (as root, if make runs as root), .env gives the token.
        java.nio.file.Path home = java.nio.file.Files.createDirectories(temp.resolve("home"));
        java.nio.file.Path workspace = java.nio.file.Files.createDirectories(home.resolve("Development"));
        Map<String, String> user = Map.of("HOME", home.toString());
        assertThat(checkWorkspace(workspace, user).exitCode()).as("a workspace in your home").isZero();
        // What the script says, and the workspace (and a variable with its value) that makes it say so.
        Map<String, String[]> refused = new java.util.LinkedHashMap<>();
        refused.put("holds this checkout of sandbox-mcp", new String[] {Repo.root().getParent().toString()});
        refused.put("the workspace / holds this checkout of sandbox-mcp", new String[] {"/"});
        refused.put("is inside this checkout of sandbox-mcp", new String[] {Repo.path("infra").toString()});
        refused.put("holds your home directory", new String[] {home.toString()});
        refused.put("holds the runner's home directory", new String[] {workspace.toString(), "SANDBOX_HOME_DIR",
                workspace.resolve("cache/home").toString()});
        refused.put("holds the audit's record of what you accepted", new String[] {workspace.toString(), "XDG_STATE_HOME",
                workspace.resolve("state").toString()});
        refused.put("is inside a hidden directory of your home (" + home.resolve(".config") + ")",
                new String[] {java.nio.file.Files.createDirectories(home.resolve(".config/projects")).toString()});
        refused.put("holds a directory on your PATH (" + workspace.resolve("tools/bin") + ")", new String[] {
                workspace.toString(), "PATH", workspace.resolve("tools/bin") + ":" + System.getenv("PATH")});
        refused.put("holds a directory on your PATH (" + home + "/Development/tools)", new String[] {
                workspace.toString(), "PATH", "~/Development/tools:" + System.getenv("PATH")});
        refused.put("holds XDG_CONFIG_HOME (" + workspace.resolve("config") + ")", new String[] {
                workspace.toString(), "XDG_CONFIG_HOME", workspace.resolve("config").toString()});
        java.nio.file.Path dotfiles = java.nio.file.Files.createDirectories(temp.resolve("dotfiles-in/Development/dots"));
        java.nio.file.Path otherHome = java.nio.file.Files.createDirectories(temp.resolve("dotfiles-in"));
        java.nio.file.Files.createSymbolicLink(otherHome.resolve(".vimrc"), dotfiles.resolve("vimrc"));
        refused.put("holds what " + otherHome.resolve(".vimrc") + " points to", new String[] {
                otherHome.resolve("Development").toString(), "HOME", otherHome.toString()});
        for (Map.Entry<String, String[]> each : refused.entrySet()) {
            Map<String, String> environment = new java.util.HashMap<>(user);
            if (each.getValue().length > 1) {
                environment.put(each.getValue()[1], each.getValue()[2]);
            }
            Commands.Result result = checkWorkspace(java.nio.file.Path.of(each.getValue()[0]), environment);
            assertThat(result.exitCode()).as(each.getKey() + ": " + result.output()).isEqualTo(2);
            assertThat(result.output()).contains(each.getKey());
        }
        Commands.Result dot = checkWorkspace(workspace, Map.of("HOME", home.toString(), "PATH", ".:" + System.getenv("PATH")));
        assertThat(dot.exitCode()).as("warned, not refused: " + dot.output()).isZero();
        assertThat(dot.output()).contains("warning: your PATH holds '.'");
        Commands.Result relative = checkWorkspace(java.nio.file.Path.of("Development"), user);
        assertThat(relative.exitCode()).isEqualTo(2);
        assertThat(relative.output()).contains("must be an absolute path");
    }

    private static Commands.Result checkWorkspace(java.nio.file.Path workspace, Map<String, String> environment)
            throws Exception {
        return Commands.run(List.of("bash", Repo.path("infra/compose/check-workspace.sh").toString(), workspace.toString()),
                environment, Repo.root(), 30);
    }

    @Test
    void cleanHomeRemovesReadOnlyDirectoriesToo(@org.junit.jupiter.api.io.TempDir java.nio.file.Path temp) throws Exception {
        // Go's module cache is read-only (0555), as a command may make anything: rm -rf alone
        // stopped there, as you, after the volume was gone, and the next make up took the rest.
        assumeTrue(Commands.run(List.of("id", "-u"), 10).output().strip().equals("0"),
                "SKIPPED: needs root, to run the script as another user than the files' owner would be");
        // A volume that no longer exists: the directory given is removed (docker's empty line
        // before its failure was once taken for the directory, and nothing was removed).
        java.nio.file.Path mine = temp.resolve("mine");
        java.nio.file.Path module = java.nio.file.Files.createDirectories(mine.resolve("home/go/pkg/mod/example.com@v1"));
        java.nio.file.Files.writeString(module.resolve("go.mod"), "module example.com\n");
        Commands.run(List.of("chown", "-R", "65534:65534", mine.toString()), 10);
        Commands.run(List.of("chmod", "-R", "a-w", mine.resolve("home/go").toString()), 10);
        Commands.run(List.of("chmod", "o+x", temp.toString()), 10);
        // A copy the other user can read: the checkout may sit in a directory of mode 0700 (CI's mktemp -d).
        java.nio.file.Path script = java.nio.file.Files.copy(Repo.path("infra/compose/home-volume.sh"),
                temp.resolve("home-volume.sh"));
        Commands.run(List.of("chmod", "0755", script.toString()), 10);
        Commands.Result removed = Commands.run(List.of("bash", "-c", "echo y | setpriv --reuid=65534 --regid=65534 --clear-groups "
                + "bash " + script + " remove sandbox-mcp-e2e-no-such-volume " + mine.resolve("home")), Map.of(), temp, 60);
        assertThat(removed.exitCode()).as(removed.output()).isZero();
        assertThat(removed.output()).contains("removed " + mine.resolve("home"));
        assertThat(mine.resolve("home")).doesNotExist();
    }

    private static int indexOf(List<String> lines, String part) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(part)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void theToolchainTableOfTheDocsIsTheScripts() throws Exception {
        // infra/image/toolchain-env.sh holds the list; docs/toolchains.md shows it, and must agree.
        String script = Repo.path("infra/image/toolchain-env.sh").toString();
        String docs = Files.readString(Repo.path("docs/toolchains.md"));
        java.util.regex.Matcher row = java.util.regex.Pattern.compile("(?m)^\\| `(\\w+)` \\| ([^|]*)\\|$").matcher(docs);
        List<String> names = new java.util.ArrayList<>();
        while (row.find()) {
            names.add(row.group(1));
            String packages = Commands.run(List.of("bash", script, "--packages", row.group(1)), 30).output().strip();
            List<String> shown = new java.util.ArrayList<>();
            java.util.regex.Matcher quoted = java.util.regex.Pattern.compile("`([a-z0-9.+-]+)`").matcher(
                    row.group(2).replaceAll("\\([^)]*\\)", "").replaceAll(";.*", ""));
            while (quoted.find()) {
                shown.add(quoted.group(1));
            }
            assertThat(String.join(",", shown)).as("docs/toolchains.md's row for " + row.group(1)).isEqualTo(packages);
        }
        assertThat(names).as("every toolchain the script knows has a row").hasSize(6);
        Commands.Result unknown = Commands.run(List.of("bash", script, "--packages", "cobol"), 30);
        assertThat(unknown.exitCode()).isNotZero();
        assertThat(unknown.output()).contains("known: " + String.join(", ", names));
        String defaults = Commands.run(List.of("bash", script, "--default"), 30).output().strip();
        assertThat(docs).contains("The default is `" + defaults + "`");
        assertThat(Files.readString(Repo.path("docs/configuration.md"))).contains("| `SANDBOX_TOOLCHAINS` | `" + defaults + "` |");
    }
}

package dev.sandboxmcp.hostaudit;

import static dev.sandboxmcp.hostaudit.HiddenChangesTest.about;
import static dev.sandboxmcp.hostaudit.TreeAuditTest.audit;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@code .envrc} you allowed hands your shell to files the sandbox can write, and direnv does
 * not ask again when they change (checked by hand with direnv 2.32.1: a changed {@code dotenv}
 * file and a changed {@code source_env} script run at the next {@code cd}, and {@code PATH_add bin}
 * puts the tree's {@code bin} first on PATH). The audit digests each loaded file and names each
 * directory or code it runs from.
 */
class EnvrcTest {

    @TempDir
    Path temp;

    @Test
    void readsTheStatementsOfAnEnvrcAsSimpleCommands() {
        String text = """
                # dotenv in a comment is nothing
                dotenv
                source_env "lib/env.sh" # and a comment after
                if has nix; then use nix; fi
                [ -f local.env ] && dotenv_if_exists local.env || true
                PATH_add \\
                  bin
                path_add PYTHONPATH src
                source_up '.shared'
                source "$DIR/x.sh"
                export A=1
                """;
        assertThat(Envrc.statements(text)).extracting(Envrc.Statement::text, Envrc.Statement::kind, Envrc.Statement::paths)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("dotenv", Envrc.Kind.LOADS, List.of(".env")),
                        org.assertj.core.groups.Tuple.tuple("source_env lib/env.sh", Envrc.Kind.LOADS, List.of("lib/env.sh")),
                        org.assertj.core.groups.Tuple.tuple("use nix", Envrc.Kind.RUNS_FROM, List.of()),
                        org.assertj.core.groups.Tuple.tuple("use nix", Envrc.Kind.LOADS,
                                List.of("shell.nix", "default.nix", "flake.nix", "flake.lock")),
                        org.assertj.core.groups.Tuple.tuple("dotenv_if_exists local.env", Envrc.Kind.LOADS, List.of("local.env")),
                        org.assertj.core.groups.Tuple.tuple("PATH_add bin", Envrc.Kind.RUNS_FROM, List.of("bin")),
                        org.assertj.core.groups.Tuple.tuple("path_add PYTHONPATH src", Envrc.Kind.RUNS_FROM, List.of("src")),
                        org.assertj.core.groups.Tuple.tuple("source_up .shared", Envrc.Kind.LOADS_FROM_ABOVE, List.of(".shared")),
                        org.assertj.core.groups.Tuple.tuple("source $DIR/x.sh", Envrc.Kind.LOADS, List.of("$DIR/x.sh")));
        assertThat(Envrc.statements("source \"$DIR/x.sh\"").getFirst().computed()).isTrue();
        assertThat(Envrc.statements("source \"$HOME/x.sh\"").getFirst().paths()).containsExactly("~/x.sh");
    }

    /** The forms a red-team reading found missed (each run by direnv 2.32.1). */
    @Test
    void statementsBehindKeywordsAssignmentsAndParenthesesAreFound() {
        String text = """
                builtin source b.sh
                if source_env_if_exists c.sh; then :; fi
                FOO=1 source_env d.sh
                (source e.sh)
                true & source f.sh
                export PATH="$PWD/bin2:$PATH"
                eval "$(cat g.sh)"
                ./h.sh
                source_env "$PWD/lib/x.sh"
                use flake
                """;
        assertThat(Envrc.statements(text)).extracting(Envrc.Statement::text).containsExactly(
                "source b.sh", "source_env_if_exists c.sh", "source_env d.sh", "source e.sh", "source f.sh",
                "export PATH=\"$PWD/bin2:$PATH\"", "eval \"$(cat g.sh)\"", "./h.sh", "source_env $PWD/lib/x.sh", "use flake",
                "use flake");
        assertThat(Envrc.statements("source_env \"$PWD/lib/x.sh\"").getFirst().paths()).containsExactly("lib/x.sh");
        assertThat(Envrc.statements("source_env \"$PWD/lib/x.sh\"").getFirst().computed()).isFalse();
    }

    @Test
    void whatALoadedFileLoadsIsFollowedAndALinkedEnvrcIsRead() throws Exception {
        Path tree = Files.createDirectories(temp.resolve("tree"));
        Path lib = Files.createDirectories(tree.resolve("project/lib"));
        Files.writeString(lib.resolve("env.sh"), "source_env inner.sh\n");
        Files.writeString(lib.resolve("inner.sh"), "export A=1\n");
        Files.writeString(tree.resolve("project/real.envrc"), "source_env lib/env.sh\n./setup.sh\nuse nix\n");
        Files.writeString(tree.resolve("project/shell.nix"), "{ }\n");
        Files.createSymbolicLink(tree.resolve("project/.envrc"), Path.of("real.envrc"));

        List<Finding> first = about(audit(tree), "direnv");
        assertThat(first).extracting(Finding::key).contains("direnv: source_env lib/env.sh",
                "direnv (through project/lib/env.sh): source_env inner.sh", "direnv: ./setup.sh", "direnv: use nix");
        assertThat(first).filteredOn(finding -> finding.key().equals("direnv (through project/lib/env.sh): source_env inner.sh"))
                .singleElement().satisfies(finding -> assertThat(finding.command()).startsWith("project/lib/inner.sh, sha256 "));
        assertThat(first).filteredOn(finding -> finding.command().startsWith("project/shell.nix, sha256 ")).hasSize(1);
        assertThat(first).filteredOn(finding -> finding.command().contains("flake.nix")).as("missing nix files: none").isEmpty();

        Files.writeString(lib.resolve("inner.sh"), "touch /tmp/fired\n");
        assertThat(about(audit(tree), "direnv")).as("a change two loads down is new").isNotEqualTo(first);
    }

    @Test
    void eachFileAnEnvrcLoadsIsDigestedSoThatAChangeIsNew() throws Exception {
        Path tree = Files.createDirectories(temp.resolve("tree"));
        Path project = Files.createDirectories(tree.resolve("project/lib"));
        Files.writeString(tree.resolve(".shared"), "export S=1\n");
        Files.writeString(tree.resolve("project/.envrc"), "dotenv\nsource_env lib\nsource_env_if_exists later.sh\n"
                + "source_up .shared\nPATH_add node_modules/.bin\nsource \"$DIR/x.sh\"\n");
        Files.writeString(tree.resolve("project/.env"), "A=1\n");
        Files.writeString(project.resolve(".envrc"), "export B=1\n");

        List<Finding> first = about(audit(tree), "direnv: ");
        assertThat(first).extracting(Finding::key, Finding::command).contains(
                org.assertj.core.groups.Tuple.tuple("direnv: PATH_add node_modules/.bin", "runs programs or code from the tree, "
                        + "which the sandbox can write; direnv does not ask again when they change"),
                org.assertj.core.groups.Tuple.tuple("direnv: source $DIR/x.sh", "a path built when it runs (not audited)"));
        assertThat(first).filteredOn(finding -> finding.key().equals("direnv: dotenv")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith("project/.env, sha256 "));
        assertThat(first).filteredOn(finding -> finding.key().equals("direnv: source_env lib")).singleElement()
                .as("a directory: its .envrc").satisfies(finding -> assertThat(finding.command()).startsWith("project/lib/.envrc, sha256 "));
        assertThat(first).filteredOn(finding -> finding.key().equals("direnv: source_env_if_exists later.sh")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).endsWith("project/later.sh (does not exist: whoever creates "
                        + "it decides what runs)"));
        assertThat(first).filteredOn(finding -> finding.key().equals("direnv: source_up .shared")).singleElement()
                .satisfies(finding -> assertThat(finding.command()).startsWith(".shared, sha256 "));

        Files.writeString(tree.resolve("project/.env"), "A=1\nLD_PRELOAD=./evil.so\n");
        List<Finding> second = about(audit(tree), "direnv: dotenv");
        assertThat(second).singleElement().satisfies(finding -> assertThat(finding.command()).startsWith("project/.env, sha256 ")
                .isNotEqualTo(first.stream().filter(f -> f.key().equals("direnv: dotenv")).findFirst().orElseThrow().command()));
    }
}

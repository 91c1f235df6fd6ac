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
                source "$HOME/x.sh"
                export A=1
                """;
        assertThat(Envrc.statements(text)).extracting(Envrc.Statement::text, Envrc.Statement::kind, Envrc.Statement::paths)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("dotenv", Envrc.Kind.LOADS, List.of(".env")),
                        org.assertj.core.groups.Tuple.tuple("source_env lib/env.sh", Envrc.Kind.LOADS, List.of("lib/env.sh")),
                        org.assertj.core.groups.Tuple.tuple("use nix", Envrc.Kind.RUNS_FROM, List.of()),
                        org.assertj.core.groups.Tuple.tuple("dotenv_if_exists local.env", Envrc.Kind.LOADS, List.of("local.env")),
                        org.assertj.core.groups.Tuple.tuple("PATH_add bin", Envrc.Kind.RUNS_FROM, List.of("bin")),
                        org.assertj.core.groups.Tuple.tuple("path_add PYTHONPATH src", Envrc.Kind.RUNS_FROM, List.of("src")),
                        org.assertj.core.groups.Tuple.tuple("source_up .shared", Envrc.Kind.LOADS_FROM_ABOVE, List.of(".shared")),
                        org.assertj.core.groups.Tuple.tuple("source $HOME/x.sh", Envrc.Kind.LOADS, List.of("$HOME/x.sh")));
        assertThat(Envrc.statements("source \"$HOME/x.sh\"").getFirst().computed()).isTrue();
    }

    @Test
    void eachFileAnEnvrcLoadsIsDigestedSoThatAChangeIsNew() throws Exception {
        Path tree = Files.createDirectories(temp.resolve("tree"));
        Path project = Files.createDirectories(tree.resolve("project/lib"));
        Files.writeString(tree.resolve(".shared"), "export S=1\n");
        Files.writeString(tree.resolve("project/.envrc"), "dotenv\nsource_env lib\nsource_env_if_exists later.sh\n"
                + "source_up .shared\nPATH_add node_modules/.bin\nsource \"$PWD/x.sh\"\n");
        Files.writeString(tree.resolve("project/.env"), "A=1\n");
        Files.writeString(project.resolve(".envrc"), "export B=1\n");

        List<Finding> first = about(audit(tree), "direnv: ");
        assertThat(first).extracting(Finding::key, Finding::command).contains(
                org.assertj.core.groups.Tuple.tuple("direnv: PATH_add node_modules/.bin", "runs programs or code from the tree, "
                        + "which the sandbox can write; direnv does not ask again when they change"),
                org.assertj.core.groups.Tuple.tuple("direnv: source $PWD/x.sh", "a path built when it runs (not audited)"));
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

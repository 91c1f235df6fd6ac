package dev.sandboxmcp.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.workspace.ProtectedPaths.Kind;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

class ProtectedPathsTest {

    static final IntPredicate NO_GIT_DIRECTORIES = depth -> false;

    static Optional<Kind> classify(String path) {
        return ProtectedPaths.classify(Arrays.asList(path.split("/")), NO_GIT_DIRECTORIES);
    }

    @Test
    void gitConfigAndHooksAtAnyDepthAndInAnyCase() {
        assertThat(classify(".git/config")).contains(Kind.GIT_CONFIG);
        assertThat(classify("a/b/c/.git/config")).contains(Kind.GIT_CONFIG);
        assertThat(classify("a/.GIT/Config")).contains(Kind.GIT_CONFIG);
        assertThat(classify("a/.git/modules/sub/config")).contains(Kind.GIT_CONFIG);
        assertThat(classify("a/.git/modules/sub/modules/deeper/config")).contains(Kind.GIT_CONFIG);
        assertThat(classify("a/.git/worktrees/w/config.worktree")).contains(Kind.GIT_CONFIG);
        assertThat(classify(".git/hooks/pre-commit")).contains(Kind.GIT_HOOK);
        assertThat(classify("x/.git/HOOKS/post-checkout")).contains(Kind.GIT_HOOK);
        assertThat(classify(".git/modules/sub/hooks/pre-push")).contains(Kind.GIT_HOOK);
        assertThat(classify(".git/hooks/deeper/anything")).contains(Kind.GIT_HOOK);
    }

    @Test
    void whatPointsGitAtAGitDirectory() {
        assertThat(classify("sub/.git")).contains(Kind.GIT_POINTER);
        assertThat(classify(".GIT")).contains(Kind.GIT_POINTER);
        assertThat(classify("a/.git/worktrees/w/commondir")).contains(Kind.GIT_POINTER);
        assertThat(classify("a/.git/worktrees/w/gitdir")).contains(Kind.GIT_POINTER);
        assertThat(classify("src/commondir")).isEmpty();
        assertThat(classify("docs/gitdir")).isEmpty();
    }

    @Test
    void direnvAndVsCodeTasksAtAnyDepth() {
        assertThat(classify(".envrc")).contains(Kind.DIRENV);
        assertThat(classify("a/b/.ENVRC")).contains(Kind.DIRENV);
        assertThat(classify(".vscode/tasks.json")).contains(Kind.VSCODE_TASKS);
        assertThat(classify("a/.VSCode/Tasks.json")).contains(Kind.VSCODE_TASKS);
    }

    @Test
    void ordinaryFilesWithTheSameNamesArePlainFiles() {
        assertThat(classify("config")).isEmpty();
        assertThat(classify("src/config")).isEmpty();
        assertThat(classify("hooks/pre-commit")).isEmpty();
        assertThat(classify("src/hooks/useThing.ts")).isEmpty();
        assertThat(classify("tasks.json")).isEmpty();
        assertThat(classify(".vscode/settings.json")).isEmpty();
        assertThat(classify(".envrc.example")).isEmpty();
        assertThat(classify(".git/COMMIT_EDITMSG")).isEmpty();
        assertThat(classify(".git/info/exclude")).isEmpty();
        assertThat(classify(".github/hooks/x")).isEmpty();
        assertThat(classify(".gitconfig")).isEmpty();
    }

    @Test
    void aGitDirectoryKnownByItsContentsProtectsItsConfigAndHooks() {
        // Only "separate.git", at the top, holds HEAD and objects.
        assertThat(classifyWithGitDirectory("separate.git/config", "separate.git")).contains(Kind.GIT_CONFIG);
        assertThat(classifyWithGitDirectory("separate.git/hooks/pre-commit", "separate.git")).contains(Kind.GIT_HOOK);
        assertThat(classifyWithGitDirectory("other/config", "separate.git")).isEmpty();
        assertThat(classifyWithGitDirectory("other/hooks/pre-commit", "separate.git")).isEmpty();
        assertThat(classifyWithGitDirectory("separate.git/src/config", "separate.git")).isEmpty();
    }

    static Optional<Kind> classifyWithGitDirectory(String path, String gitDirectory) {
        List<String> names = Arrays.asList(path.split("/"));
        return ProtectedPaths.classify(names, depth -> String.join("/", names.subList(0, depth)).equals(gitDirectory));
    }

    @Test
    void gitDirectoryByContentsNeedsHeadAndObjectsOrCommondirOfAnyKind() {
        // The entries' kinds are not asked: git takes an objects that is a link (to another
        // repository's objects) as well as a directory.
        assertThat(looks(Set.of("HEAD", "objects"))).isTrue();
        assertThat(looks(Set.of("HEAD", "commondir"))).isTrue();
        assertThat(looks(Set.of("HEAD"))).isFalse();
        assertThat(looks(Set.of("objects", "commondir"))).isFalse();
    }

    static boolean looks(Set<String> entries) {
        return ProtectedPaths.looksLikeGitDirectory(entries::contains);
    }
}

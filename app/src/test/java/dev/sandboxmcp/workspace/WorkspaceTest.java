package dev.sandboxmcp.workspace;

import static dev.sandboxmcp.workspace.WorkspaceException.Reason.CHANGED;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.ESCAPES_WORKSPACE;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.INVALID_PATH;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.IS_DIRECTORY;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.NOT_A_DIRECTORY;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.NOT_A_REGULAR_FILE;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.NOT_FOUND;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.PARENT_MISSING;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.TOO_LARGE;
import static dev.sandboxmcp.workspace.WorkspaceException.Reason.TOO_MANY_LINKS;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.FifoSwapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkspaceTest {

    private static final int LIMIT = 1024;

    @TempDir
    Path temp;
    Path root;
    Path outside;
    Workspace workspace;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectory(temp.resolve("root"));
        outside = Files.createDirectory(temp.resolve("outside"));
        Files.writeString(outside.resolve("secret.txt"), "outside secret");
        Files.writeString(root.resolve("hello.txt"), "hello");
        Files.createDirectories(root.resolve("src/main"));
        Files.writeString(root.resolve("src/main/App.java"), "class App {}");
        workspace = Workspace.open(root);
    }

    @AfterEach
    void tearDown() throws IOException {
        workspace.close();
    }

    private String read(String path) throws IOException {
        return new String(workspace.readFile(path, LIMIT), UTF_8);
    }

    private static WorkspaceException.Reason reasonOf(ThrowingCall call) {
        try {
            call.run();
        } catch (WorkspaceException e) {
            return e.reason();
        } catch (IOException e) {
            throw new AssertionError("expected a WorkspaceException, got " + e, e);
        }
        throw new AssertionError("expected the call to be refused");
    }

    @Test
    void aNameThatIsNotUtf8IsListedAndMarkedNotLeftOut() throws Exception {
        // Java names files by strings; the shell makes names of any bytes. Before, such an entry
        // was looked up again by its decoded name, not found, and left out with its subtree.
        Process made = new ProcessBuilder("sh", "-c", "printf x > \"$(printf 'a\\377')\"; mkdir \"$(printf '\\376')\"; "
                + "printf y > \"$(printf '\\376')/inside\"; ln -s hello.txt \"$(printf 'l\\377')\"")
                .directory(root.toFile()).redirectErrorStream(true).start();
        assertThat(made.waitFor()).as(new String(made.getInputStream().readAllBytes(), UTF_8)).isZero();
        Workspace.Listing listing = workspace.list(".", 2, true, 100);
        assertThat(listing.truncated()).isFalse();
        assertThat(listing.entries()).filteredOn(Workspace.Entry::notUtf8)
                .extracting(e -> e.path() + " " + e.kind() + " " + e.size() + " " + e.linkTarget())
                .containsExactlyInAnyOrder("a\uFFFD FILE 1 null", "\uFFFD DIRECTORY 0 null", "l\uFFFD SYMLINK 9 hello.txt");
        assertThat(listing.entries()).filteredOn(e -> !e.notUtf8()).extracting(Workspace.Entry::path)
                .containsExactly("hello.txt", "src", "src/main");
    }

    interface ThrowingCall {
        void run() throws IOException;
    }

    @Test
    void readsFilesBeneathTheRoot() throws IOException {
        assertThat(read("hello.txt")).isEqualTo("hello");
        assertThat(read("src/main/App.java")).isEqualTo("class App {}");
        assertThat(read("./src//main/./App.java")).isEqualTo("class App {}");
    }

    @Test
    void dotDotIsFineWhileItStaysInside() throws IOException {
        assertThat(read("src/main/../../hello.txt")).isEqualTo("hello");
    }

    @Test
    void readRejectsParentTraversalOutOfTheRoot() {
        assertThat(reasonOf(() -> read("../outside/secret.txt"))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(reasonOf(() -> read("src/../../outside/secret.txt"))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(reasonOf(() -> read(".."))).isEqualTo(ESCAPES_WORKSPACE);
    }

    @Test
    void rejectsAbsoluteEmptyAndNulPaths() {
        assertThat(reasonOf(() -> read(outside.resolve("secret.txt").toString()))).isEqualTo(INVALID_PATH);
        assertThat(reasonOf(() -> read(root.resolve("hello.txt").toString()))).isEqualTo(INVALID_PATH);
        assertThat(reasonOf(() -> read(""))).isEqualTo(INVALID_PATH);
        assertThat(reasonOf(() -> read("hello.txt\0.png"))).isEqualTo(INVALID_PATH);
        assertThat(reasonOf(() -> workspace.writeFile("/tmp/x", new byte[0]))).isEqualTo(INVALID_PATH);
    }

    @Test
    void readFollowsSymlinksThatStayInside() throws IOException {
        Files.createSymbolicLink(root.resolve("link.txt"), Path.of("src/main/App.java"));
        Files.createSymbolicLink(root.resolve("src/up"), Path.of("../hello.txt"));
        assertThat(read("link.txt")).isEqualTo("class App {}");
        assertThat(read("src/up")).isEqualTo("hello");
    }

    @Test
    void readRejectsSymlinkThatLeavesWorkspace() throws IOException {
        Files.createSymbolicLink(root.resolve("escape.txt"), Path.of("../outside/secret.txt"));
        assertThat(reasonOf(() -> read("escape.txt"))).isEqualTo(ESCAPES_WORKSPACE);
    }

    @Test
    void absoluteSymlinksAreRefusedEvenWhenTheyPointInside() throws IOException {
        Files.createSymbolicLink(root.resolve("abs-out"), outside.resolve("secret.txt"));
        Files.createSymbolicLink(root.resolve("abs-in"), root.resolve("hello.txt"));
        assertThat(reasonOf(() -> read("abs-out"))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(reasonOf(() -> read("abs-in"))).isEqualTo(ESCAPES_WORKSPACE);
    }

    @Test
    void readRejectsASymlinkChainThatEndsOutside() throws IOException {
        Files.createSymbolicLink(root.resolve("a"), Path.of("b"));
        Files.createSymbolicLink(root.resolve("b"), Path.of("src/c"));
        Files.createSymbolicLink(root.resolve("src/c"), Path.of("../../outside/secret.txt"));
        assertThat(reasonOf(() -> read("a"))).isEqualTo(ESCAPES_WORKSPACE);
    }

    @Test
    void readRejectsDirectorySymlinkInTheMiddleThatLeaves() throws IOException {
        Files.createSymbolicLink(root.resolve("src/out"), Path.of("../../outside"));
        assertThat(reasonOf(() -> read("src/out/secret.txt"))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(reasonOf(() -> workspace.writeFile("src/out/new.txt", "x".getBytes(UTF_8))))
                .isEqualTo(ESCAPES_WORKSPACE);
        assertThat(outside.resolve("new.txt")).doesNotExist();
    }

    @Test
    void theNameWalkedThroughInWalksDocReachesTheFileBehindTheLink() throws IOException {
        Files.createDirectory(root.resolve("docs"));
        Files.createDirectories(root.resolve("src/v2"));
        Files.createSymbolicLink(root.resolve("src/cur"), Path.of("v2"));
        workspace.writeFile("docs/../src/cur/App.java", "class App {}".getBytes(UTF_8));
        assertThat(root.resolve("src/v2/App.java")).hasContent("class App {}");
        assertThat(read("docs/../src/cur/App.java")).isEqualTo("class App {}");
    }

    @Test
    void directorySymlinkInsideIsFollowed() throws IOException {
        Files.createSymbolicLink(root.resolve("code"), Path.of("src/main"));
        assertThat(read("code/App.java")).isEqualTo("class App {}");
        workspace.writeFile("code/New.java", "class New {}".getBytes(UTF_8));
        assertThat(root.resolve("src/main/New.java")).hasContent("class New {}");
    }

    @Test
    void symlinkLoopIsReportedNotFollowedForever() throws IOException {
        Files.createSymbolicLink(root.resolve("loop1"), Path.of("loop2"));
        Files.createSymbolicLink(root.resolve("loop2"), Path.of("loop1"));
        assertThat(reasonOf(() -> read("loop1"))).isEqualTo(TOO_MANY_LINKS);
    }

    @Test
    void writeThroughDanglingSymlinkThatLeavesIsRefusedAndCreatesNothing() throws IOException {
        Files.createSymbolicLink(root.resolve("dangling"), Path.of("../outside/created.txt"));
        assertThat(reasonOf(() -> workspace.writeFile("dangling", "x".getBytes(UTF_8)))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(reasonOf(() -> workspace.appendFile("dangling", "x".getBytes(UTF_8)))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(outside.resolve("created.txt")).doesNotExist();
        Files.createSymbolicLink(root.resolve("dangling-abs"), outside.resolve("abs.txt"));
        assertThat(reasonOf(() -> workspace.writeFile("dangling-abs", "x".getBytes(UTF_8)))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(outside.resolve("abs.txt")).doesNotExist();
    }

    @Test
    void writeThroughDanglingSymlinkInsideCreatesTheTarget() throws IOException {
        Files.createSymbolicLink(root.resolve("todo"), Path.of("src/TODO.md"));
        workspace.writeFile("todo", "- test".getBytes(UTF_8));
        assertThat(root.resolve("src/TODO.md")).hasContent("- test");
        assertThat(Files.isSymbolicLink(root.resolve("todo"))).isTrue();
    }

    @Test
    void replaceIfUnchangedWritesOverWhatWasRead() throws IOException {
        Files.writeString(root.resolve("notes.md"), "v1");
        byte[] read = workspace.readFile("notes.md", 1024);

        workspace.replaceIfUnchanged("notes.md", read, "v2".getBytes(UTF_8));

        assertThat(root.resolve("notes.md")).hasContent("v2");
    }

    @Test
    void replaceIfUnchangedLeavesAFileThatChangedSinceItWasRead() throws IOException {
        Path notes = Files.writeString(root.resolve("notes.md"), "v1");
        byte[] read = workspace.readFile("notes.md", 1024);
        Files.writeString(notes, "v1, and a line a command appended meanwhile");

        assertThat(reasonOf(() -> workspace.replaceIfUnchanged("notes.md", read, "v2".getBytes(UTF_8)))).isEqualTo(CHANGED);
        assertThat(notes).hasContent("v1, and a line a command appended meanwhile");
        Files.delete(notes);
        assertThat(reasonOf(() -> workspace.replaceIfUnchanged("notes.md", read, "v2".getBytes(UTF_8)))).isEqualTo(CHANGED);
        assertThat(notes).doesNotExist();
        Files.writeString(notes, "v0"); // same size, other bytes
        assertThat(reasonOf(() -> workspace.replaceIfUnchanged("notes.md", read, "v2".getBytes(UTF_8)))).isEqualTo(CHANGED);
        assertThat(notes).hasContent("v0");
        try (Stream<Path> files = Files.list(root)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains(".tmp"));
        }
    }

    @Test
    void writeReplacesAtomicallyKeepsModeAndLeavesNoTemporaryFile() throws IOException {
        Path script = root.resolve("run.sh");
        Files.writeString(script, "old");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-x---"));
        Object inodeBefore = Files.getAttribute(script, "unix:ino");

        workspace.writeFile("run.sh", "#!/bin/sh\necho new\n".getBytes(UTF_8));

        assertThat(script).hasContent("#!/bin/sh\necho new");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(script))).isEqualTo("rwxr-x---");
        assertThat(Files.getAttribute(script, "unix:ino")).as("replaced by rename, not rewritten in place")
                .isNotEqualTo(inodeBefore);
        try (Stream<Path> files = Files.list(root)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains(".tmp"));
        }
    }

    @Test
    void appendAddsToTheEndAndCreatesMissingFiles() throws IOException {
        workspace.appendFile("hello.txt", " world".getBytes(UTF_8));
        workspace.appendFile("log.txt", "one\n".getBytes(UTF_8));
        workspace.appendFile("log.txt", "two\n".getBytes(UTF_8));
        assertThat(root.resolve("hello.txt")).hasContent("hello world");
        assertThat(root.resolve("log.txt")).hasContent("one\ntwo");
    }

    @Test
    void missingParentDirectoryIsAClearError() {
        WorkspaceException e = (WorkspaceException) org.assertj.core.api.Assertions.catchThrowable(
                () -> workspace.writeFile("no/such/dir/file.txt", "x".getBytes(UTF_8)));
        assertThat(e.reason()).isEqualTo(PARENT_MISSING);
        assertThat(e.getMessage()).contains("'no'");
        assertThat(e.err()).isEqualTo(new WorkspaceException.ParentMissing("no")); // the tools word what to do: FileToolsTest
        assertThat(e.path()).isEqualTo("no/such/dir/file.txt");
        assertThat(e.op()).isEqualTo(WorkspaceException.Op.WRITE);
        assertThat(root.resolve("no")).doesNotExist();
    }

    @Test
    void directoriesAndMissingFilesGetTheirOwnErrors() throws IOException {
        assertThat(reasonOf(() -> read("src"))).isEqualTo(IS_DIRECTORY);
        assertThat(reasonOf(() -> read("."))).isEqualTo(IS_DIRECTORY);
        assertThat(reasonOf(() -> read("missing.txt"))).isEqualTo(NOT_FOUND);
        assertThat(reasonOf(() -> workspace.writeFile("src", new byte[0]))).isEqualTo(IS_DIRECTORY);
        assertThat(reasonOf(() -> read("hello.txt/x"))).isEqualTo(NOT_A_DIRECTORY);
    }

    @Test
    void fifosAreRefusedInsteadOfBlocking() throws Exception {
        FifoSwapper.mkfifo(root.resolve("pipe"));
        assertThat(reasonOf(() -> read("pipe"))).isEqualTo(NOT_A_REGULAR_FILE);
        assertThat(reasonOf(() -> workspace.openFile("pipe"))).isEqualTo(NOT_A_REGULAR_FILE);
        assertThat(reasonOf(() -> workspace.writeFile("pipe", new byte[0]))).isEqualTo(NOT_A_REGULAR_FILE);
        assertThat(reasonOf(() -> workspace.appendFile("pipe", new byte[] {'x'}))).isEqualTo(NOT_A_REGULAR_FILE);
        assertThat(reasonOf(() -> workspace.replaceIfUnchanged("pipe", new byte[0], new byte[] {'x'})))
                .isEqualTo(NOT_A_REGULAR_FILE);
        assertThat(reasonOf(() -> workspace.list("pipe", 1, true, 10))).isEqualTo(NOT_A_DIRECTORY);
        assertThat(reasonOf(() -> read("pipe/x"))).isEqualTo(NOT_A_DIRECTORY);
        assertThat(Files.isRegularFile(root.resolve("pipe"))).isFalse();
    }

    @Test
    void operationsLeaveNoDescriptorOpen() throws Exception {
        FifoSwapper.mkfifo(root.resolve("pipe"));
        Files.createSymbolicLink(root.resolve("link"), Path.of("src/main/App.java"));
        Files.createSymbolicLink(root.resolve("escape"), Path.of("../outside/secret.txt"));
        Path tree = root.toRealPath().getParent();
        long before = openDescriptorsUnder(tree);
        for (int i = 0; i < 200; i++) {
            read("src/main/App.java");
            read("link");
            workspace.openFile("hello.txt").close();
            workspace.writeFile("src/main/New.java", "class New {}".getBytes(UTF_8));
            workspace.appendFile("src/log.txt", "x".getBytes(UTF_8));
            workspace.replaceIfUnchanged("src/main/New.java", "class New {}".getBytes(UTF_8), "class New {}".getBytes(UTF_8));
            workspace.list(".", 3, true, 100);
            workspace.resolveDirectory("src/main");
            for (String refused : new String[] {"pipe", "escape", "no/such", "src", "hello.txt/x", "../x", "src/../.."}) {
                reasonOf(() -> read(refused));
                reasonOf(() -> workspace.appendFile(refused, new byte[] {'x'}));
            }
        }
        assertThat(openDescriptorsUnder(tree)).isEqualTo(before);
    }

    /**
     * This process's descriptors of files under {@code tree} (the workspace and its neighbours):
     * a count of all of them would also see what other threads of the test JVM open and close.
     */
    private static long openDescriptorsUnder(Path tree) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).startsWith(tree);
                } catch (IOException closedMeanwhile) {
                    return false;
                }
            }).count();
        }
    }

    @Test
    void readLimitHoldsAtTheEdge() throws IOException {
        Files.write(root.resolve("exact"), new byte[LIMIT]);
        Files.write(root.resolve("over"), new byte[LIMIT + 1]);
        assertThat(workspace.readFile("exact", LIMIT)).hasSize(LIMIT);
        assertThat(reasonOf(() -> workspace.readFile("over", LIMIT))).isEqualTo(TOO_LARGE);
        WorkspaceException over = (WorkspaceException) org.assertj.core.api.Assertions.catchThrowable(
                () -> workspace.readFile("over", LIMIT));
        assertThat(over.err()).isEqualTo(new WorkspaceException.TooLarge(LIMIT + 1, LIMIT));
        assertThat(over.path()).isEqualTo("over");
        assertThat(over.op()).isEqualTo(WorkspaceException.Op.READ);
    }

    @Test
    void resolveDirectoryStaysInside() throws IOException {
        assertThat(workspace.resolveDirectory(".")).isEqualTo(root.toRealPath());
        assertThat(workspace.resolveDirectory("src/main")).isEqualTo(root.toRealPath().resolve("src/main"));
        Files.createSymbolicLink(root.resolve("out"), Path.of("../outside"));
        assertThat(reasonOf(() -> workspace.resolveDirectory("out"))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(reasonOf(() -> workspace.resolveDirectory("hello.txt"))).isEqualTo(NOT_A_DIRECTORY);
        assertThat(reasonOf(() -> workspace.resolveDirectory("nope"))).isEqualTo(NOT_FOUND);
    }

    /** Another program reads the pinned file, not whatever its name leads to by then. */
    @Test
    void aPinnedFileIsTheOneOpenedWhateverItsNameBecomes() throws Exception {
        try (PinnedFile pinned = workspace.pinFile("hello.txt")) {
            PinnedFile.Stat before = pinned.stat();
            Path other = Files.writeString(root.resolve("other.txt"), "another file");
            Files.move(other, root.resolve("hello.txt"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Process cat = new ProcessBuilder("cat", pinned.path().toString()).start();
            assertThat(new String(cat.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("hello");
            assertThat(cat.waitFor()).isZero();
            assertThat(pinned.stat().fileKey()).isEqualTo(before.fileKey());
            assertThat(pinned.stat().changed()).as("unlinked since: its change time moved").isNotEqualTo(before.changed());
        }
        FifoSwapper.mkfifo(root.resolve("pipe"));
        assertThat(reasonOf(() -> workspace.pinFile("pipe"))).isEqualTo(NOT_A_REGULAR_FILE);
        Files.createSymbolicLink(root.resolve("out"), Path.of("../outside"));
        assertThat(reasonOf(() -> workspace.pinFile("out"))).isEqualTo(ESCAPES_WORKSPACE);
    }

    @Test
    void aSubtreeIsOpenedInsideAndCannotBeLeftEither() throws IOException {
        Files.createSymbolicLink(root.resolve("src/main/up"), Path.of("../../hello.txt"));
        try (Workspace main = workspace.openSubtreeForReading("src/main")) {
            assertThat(main.root()).isEqualTo(root.toRealPath().resolve("src/main"));
            assertThat(new String(main.readFile("App.java", LIMIT), StandardCharsets.UTF_8)).isEqualTo("class App {}");
            assertThat(reasonOf(() -> main.readFile("../../hello.txt", LIMIT))).isEqualTo(ESCAPES_WORKSPACE);
            assertThat(reasonOf(() -> main.readFile("up", LIMIT))).as("a link out of the subtree, though not out of "
                    + "the workspace").isEqualTo(ESCAPES_WORKSPACE);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> main.writeFile("App.java", new byte[0]))
                    .isInstanceOf(IllegalStateException.class);
        }
        Files.createSymbolicLink(root.resolve("out"), Path.of("../outside"));
        assertThat(reasonOf(() -> workspace.openSubtreeForReading("out"))).isEqualTo(ESCAPES_WORKSPACE);
        assertThat(reasonOf(() -> workspace.openSubtreeForReading("hello.txt"))).isEqualTo(NOT_A_DIRECTORY);
        assertThat(reasonOf(() -> workspace.openSubtreeForReading("nope"))).isEqualTo(NOT_FOUND);
    }

    @Test
    void symlinkSwappedInDuringOperationsNeverLeadsOutside() throws Exception {
        Path dir = root.resolve("swap");
        Path parked = root.resolve("swap-real");
        Files.createDirectory(dir);
        Files.writeString(dir.resolve("secret.txt"), "inside");
        Files.createDirectory(parked);
        Files.writeString(parked.resolve("secret.txt"), "inside");
        Path link = root.resolve("swap-link");
        Files.createSymbolicLink(link, outside);
        AtomicBoolean stop = new AtomicBoolean();
        // Flip 'swap' between a real directory and a symlink to the outside as fast as possible.
        Thread swapper = Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                try {
                    Files.move(dir, root.resolve("swap-tmp"));
                    Files.move(link, dir);
                    Files.move(dir, link);
                    Files.move(root.resolve("swap-tmp"), dir);
                } catch (IOException ignored) {
                    // a concurrent rename lost the race; keep flipping
                }
            }
        });
        int insideReads = 0;
        try {
            for (int i = 0; i < 3000; i++) {
                try {
                    String content = read("swap/secret.txt");
                    assertThat(content).isEqualTo("inside");
                    insideReads++;
                } catch (WorkspaceException expected) {
                    assertThat(expected.reason()).isIn(ESCAPES_WORKSPACE, NOT_FOUND, CHANGED,
                            WorkspaceException.Reason.PARENT_MISSING, WorkspaceException.Reason.IO_ERROR);
                }
                try {
                    workspace.writeFile("swap/written-" + (i % 7) + ".txt", "x".getBytes(UTF_8));
                } catch (WorkspaceException expected) {
                    // refused: fine, as long as nothing appears outside
                }
            }
        } finally {
            stop.set(true);
            swapper.join();
        }
        try (Stream<Path> files = Files.list(outside)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("secret.txt");
        }
        assertThat(outside.resolve("secret.txt")).hasContent("outside secret");
        assertThat(insideReads).as("some reads saw the real directory").isPositive();
    }

    @Test
    void openRefusesAMissingRoot() {
        assertThatThrownBy(() -> Workspace.open(temp.resolve("nope"))).isInstanceOf(WorkspaceException.class);
    }
}

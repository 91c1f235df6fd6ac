package dev.sandboxmcp.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Property-based attack on the workspace: random trees of files, directories, in-workspace and
 * escaping symlinks (relative and absolute), and random paths built from {@code ..}, {@code .},
 * slashes, links, unicode and long names. For every read, write and append the invariant is that
 * nothing outside the workspace is read, created or changed, and that every refusal is a
 * {@link WorkspaceException}.
 */
class WorkspaceFuzzTest {

    static final String SECRET = "OUTSIDE-SECRET-7f3a";
    static final AtomicLong CASES = new AtomicLong();
    static final AtomicLong REFUSED = new AtomicLong();
    static Path base;
    static Path outside;
    static Path root;
    static Map<String, String> outsideSnapshot;

    enum Kind { FILE, DIR, LINK_INSIDE, LINK_ESCAPE, LINK_ABSOLUTE }

    record Entry(Kind kind, String path, String target) {
    }

    enum Op { READ, READ_STREAM, WRITE, APPEND, LIST }

    record Action(Op op, String path) {
    }

    @BeforeContainer
    static void createOutside() throws IOException {
        base = Files.createTempDirectory("workspace-fuzz-");
        outside = Files.createDirectories(base.resolve("outside/deeper"));
        outside = base.resolve("outside");
        Files.writeString(outside.resolve("secret.txt"), SECRET);
        Files.writeString(outside.resolve("deeper/secret.txt"), SECRET);
        Files.writeString(base.resolve("sibling-secret.txt"), SECRET);
        root = base.resolve("ws");
        outsideSnapshot = snapshotOutside();
    }

    @AfterContainer
    static void report() throws IOException {
        System.out.printf("workspace fuzz: %d cases, %d operations refused, nothing outside read, created or changed%n",
                CASES.get(), REFUSED.get());
        deleteTree(base);
    }

    @Property(tries = 10_000)
    void nothingOutsideIsReadCreatedOrChanged(@ForAll("trees") List<Entry> tree, @ForAll("actions") List<Action> actions)
            throws IOException {
        build(tree);
        try (Workspace workspace = Workspace.open(root)) {
            for (Action action : actions) {
                CASES.incrementAndGet();
                byte[] content = ("fuzz " + action).getBytes(StandardCharsets.UTF_8);
                try {
                    switch (action.op()) {
                        case READ -> assertThat(new String(workspace.readFile(action.path(), 1 << 16), StandardCharsets.UTF_8))
                                .as("read of %s", action.path()).doesNotContain(SECRET);
                        case READ_STREAM -> {
                            try (var in = workspace.openFile(action.path())) {
                                assertThat(new String(in.readNBytes(1 << 16), StandardCharsets.UTF_8))
                                        .as("stream of %s", action.path()).doesNotContain(SECRET);
                            }
                        }
                        case WRITE -> workspace.writeFile(action.path(), content);
                        case APPEND -> workspace.appendFile(action.path(), content);
                        case LIST -> assertThat(workspace.list(action.path(), 3, true, 500).entries())
                                .as("listing of %s", action.path())
                                .noneMatch(e -> e.path().endsWith("sibling-secret.txt"));
                    }
                } catch (WorkspaceException refused) {
                    REFUSED.incrementAndGet();
                }
                assertThat(snapshotOutside()).as("outside after %s", action).isEqualTo(outsideSnapshot);
            }
        }
    }

    @Provide
    Arbitrary<List<Entry>> trees() {
        Arbitrary<String> dir = Arbitraries.of("", "a", "a/b", "d", "ü", "日本");
        Arbitrary<Entry> entry = Combinators.combine(Arbitraries.of(Kind.values()), dir, names(), insideTargets(),
                escapeTargets())
                .as((kind, parent, name, inside, escape) -> {
                    String path = parent.isEmpty() ? name : parent + "/" + name;
                    return switch (kind) {
                        case LINK_INSIDE -> new Entry(kind, path, inside);
                        case LINK_ESCAPE -> new Entry(kind, path, "../".repeat(depth(path)) + escape);
                        case LINK_ABSOLUTE -> new Entry(kind, path, base.resolve(escape).toString());
                        default -> new Entry(kind, path, null);
                    };
                });
        return entry.list().ofMinSize(1).ofMaxSize(12);
    }

    @Provide
    Arbitrary<List<Action>> actions() {
        Arbitrary<String> component = Arbitraries.oneOf(
                Arbitraries.of("..", ".", "", "a", "b", "d", "ü", "日本", "outside", "secret.txt", "ws", "x".repeat(300)),
                names());
        Arbitrary<String> path = Combinators.combine(Arbitraries.of("", "", "", "/"), component.list().ofMinSize(1).ofMaxSize(7),
                        Arbitraries.of("", "", "/"))
                .as((lead, parts, trail) -> lead + String.join("/", parts) + trail);
        return Combinators.combine(Arbitraries.of(Op.values()), path).as(Action::new).list().ofMinSize(1).ofMaxSize(3);
    }

    private Arbitrary<String> names() {
        return Arbitraries.oneOf(
                Arbitraries.of("a", "b", "d", "f.txt", "link", "ü", "日本", ".hidden", "...", "sp ace", "x".repeat(255)),
                Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(8),
                Arbitraries.strings().withCharRange('\u00c0', '\u024f').ofMinLength(1).ofMaxLength(4));
    }

    private Arbitrary<String> insideTargets() {
        return Arbitraries.of("a", "f.txt", "a/b", "../a", ".", "link", "d/../f.txt", "loop", "missing/new.txt", "ü");
    }

    private Arbitrary<String> escapeTargets() {
        return Arbitraries.of("outside", "outside/secret.txt", "outside/deeper", "outside/new.txt", "sibling-secret.txt",
                "new-sibling.txt", ".", "outside/deeper/../secret.txt");
    }

    private static int depth(String path) {
        return (int) path.chars().filter(c -> c == '/').count() + 1;
    }

    private static void build(List<Entry> tree) throws IOException {
        if (Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            deleteTree(root);
        }
        Files.createDirectories(root.resolve("a/b"));
        Files.createDirectories(root.resolve("d"));
        Files.writeString(root.resolve("f.txt"), "inside");
        // Files and directories first, links last, and never create anything through a link:
        // the harness itself must not write outside.
        Path realRoot = root.toRealPath();
        for (boolean links : new boolean[] {false, true}) {
            for (Entry entry : tree) {
                boolean isLink = entry.kind() != Kind.FILE && entry.kind() != Kind.DIR;
                Path path = root.resolve(entry.path());
                if (isLink != links || Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                try {
                    if (!links) {
                        Files.createDirectories(path.getParent());
                    }
                    if (!path.getParent().toRealPath().equals(realRoot.resolve(root.relativize(path.getParent())))) {
                        continue;
                    }
                    switch (entry.kind()) {
                        case FILE -> Files.writeString(path, "inside " + entry.path());
                        case DIR -> Files.createDirectories(path);
                        default -> Files.createSymbolicLink(path, Path.of(entry.target()));
                    }
                } catch (IOException skipped) {
                    // a parent is a file: the entry cannot exist in this tree
                }
            }
        }
    }

    /** Every entry under the parent of the workspace except the workspace: type, link target, content. */
    private static Map<String, String> snapshotOutside() throws IOException {
        Map<String, String> snapshot = new TreeMap<>();
        try (Stream<Path> entries = Files.walk(base)) {
            for (Path path : (Iterable<Path>) entries::iterator) {
                if (path.startsWith(base.resolve("ws"))) {
                    continue;
                }
                String key = base.relativize(path).toString();
                if (Files.isSymbolicLink(path)) {
                    snapshot.put(key, "link " + Files.readSymbolicLink(path));
                } else if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                    snapshot.put(key, "dir");
                } else {
                    snapshot.put(key, "file " + Files.readString(path));
                }
            }
        }
        return snapshot;
    }

    static void deleteTree(Path top) throws IOException {
        Files.walkFileTree(top, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

}

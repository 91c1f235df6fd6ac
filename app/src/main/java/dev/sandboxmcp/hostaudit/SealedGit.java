package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.PinnedFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The host's git run on a repository's object files and nothing else of the repository: from an
 * empty repository of the audit's own (the audited one's object format; neither the system's nor
 * the user's configuration), whose object directory holds only links to files the audit holds
 * open ({@link PinnedFile}), under the names git looks for. git then reads exactly the files the
 * audit identified, whatever the workspace's names lead to while it runs (a directory exchanged
 * for another, a file renamed over), and no config, hook or alternate of the audited repository.
 * Made when first needed; removed when closed.
 */
final class SealedGit implements AutoCloseable {

    private static final int MAX_OUTPUT = 1 << 20;

    private final HostGit git;
    private final boolean sha256;
    private Path directory;

    SealedGit(HostGit git, boolean sha256) {
        this.git = git;
        this.sha256 = sha256;
    }

    /**
     * Runs git with the arguments {@code args} makes of the sealed object directory, once each
     * of {@code files} (by its name under an object directory) is linked there; the links are
     * removed after. {@code maxMemoryBytes}: git's address space (a delta that expands to
     * gigabytes fails instead of taking the host's memory).
     */
    HostGit.Result run(Map<String, PinnedFile> files, Function<Path, List<String>> args, long timeoutMillis,
            long maxMemoryBytes) throws IOException {
        Path objects = gitDirectory().resolve("objects");
        List<Path> links = new ArrayList<>();
        try {
            for (Map.Entry<String, PinnedFile> file : files.entrySet()) {
                Path link = objects.resolve(file.getKey());
                Files.createDirectories(link.getParent());
                links.add(Files.createSymbolicLink(link, file.getValue().path()));
            }
            return git.run(args.apply(objects), directory, environment(), new byte[0], timeoutMillis, MAX_OUTPUT,
                    maxMemoryBytes);
        } finally {
            for (Path link : links) {
                Files.deleteIfExists(link);
            }
        }
    }

    /** Where git's messages name the sealed object directory: to be taken out of them. */
    String objectsPrefix() {
        return directory == null ? "\0" : directory.resolve("sealed.git/objects") + "/";
    }

    private Map<String, String> environment() {
        Map<String, String> environment = new HashMap<>(HostGit.ISOLATED);
        environment.put("GIT_DIR", directory.resolve("sealed.git").toString());
        environment.put("HOME", directory.toString());
        return environment;
    }

    private Path gitDirectory() throws IOException {
        if (directory == null) {
            directory = Files.createTempDirectory("sandbox-mcp-audit-");
            Path gitDirectory = directory.resolve("sealed.git");
            Files.createDirectories(gitDirectory.resolve("objects/pack"));
            Files.createDirectories(gitDirectory.resolve("objects/info"));
            Files.createDirectories(gitDirectory.resolve("refs"));
            Files.writeString(gitDirectory.resolve("HEAD"), "ref: refs/heads/sealed\n");
            Files.writeString(gitDirectory.resolve("config"), sha256
                    ? "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
                    : "[core]\n\trepositoryformatversion = 0\n\tbare = true\n");
        }
        return directory.resolve("sealed.git");
    }

    @Override
    public void close() throws IOException {
        if (directory == null) {
            return;
        }
        try (var walk = Files.walk(directory)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}

package dev.sandboxmcp.hostaudit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The findings the user accepted for one tree, kept outside it (a command in the sandbox must not
 * be able to accept its own plantings): {@code $XDG_STATE_HOME/sandbox-mcp/audit-<digest of the
 * tree's path>.json}, {@code ~/.local/state} when XDG_STATE_HOME is unset; mode 0600.
 */
record Baseline(Path file, List<Finding> accepted, String acceptedAt) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Where the baseline of {@code tree} (a real path) lives, from the environment. */
    static Path location(Path tree, Map<String, String> environment) throws IOException {
        String state = environment.get("XDG_STATE_HOME");
        Path base;
        if (state != null && state.startsWith("/")) {
            base = Path.of(state);
        } else {
            String home = environment.get("HOME");
            if (home == null || !home.startsWith("/")) {
                throw new IOException("neither XDG_STATE_HOME nor HOME is set to an absolute path: nowhere to keep the baseline");
            }
            base = Path.of(home, ".local", "state");
        }
        Path file = base.resolve("sandbox-mcp").resolve("audit-" + digest(tree.toString()) + ".json");
        Path existing = file;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing != null && existing.toRealPath().startsWith(tree)) {
            throw new IOException("the baseline " + file + " would be inside the audited tree, where the sandbox could "
                    + "rewrite it; set XDG_STATE_HOME to a directory outside " + tree);
        }
        return file;
    }

    /** The baseline at {@code file}, or an empty one (nothing accepted yet) when there is none. */
    static Baseline load(Path file) throws IOException {
        if (!Files.exists(file)) {
            return new Baseline(file, List.of(), null);
        }
        try {
            JsonNode root = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
            List<Finding> accepted = new ArrayList<>();
            for (JsonNode finding : root.path("findings")) {
                accepted.add(new Finding(finding.path("file").asString(), finding.path("key").asString(),
                        finding.path("command").asString()));
            }
            return new Baseline(file, List.copyOf(accepted), root.path("accepted").asString(null));
        } catch (JacksonException e) {
            throw new IOException("the baseline " + file + " is not readable JSON (" + e.getOriginalMessage()
                    + "); remove it and accept again", e);
        }
    }

    /** Records {@code findings} as accepted for {@code tree}: written to a temporary file, then renamed. */
    static void save(Path file, Path tree, List<Finding> findings) throws IOException {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("tree", tree.toString());
        document.put("accepted", Instant.now().toString());
        document.put("findings", findings.stream().map(Baseline::entry).toList());
        writePrivately(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(document) + "\n");
    }

    /**
     * Replaces {@code file}, beside the baseline, with {@code text}: written to a temporary file
     * only its owner can read (in a directory only its owner can enter, made if missing), then
     * renamed over it, so that no reader sees half of it.
     */
    static void writePrivately(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent(),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path temp = Files.createTempFile(file.getParent(), ".audit-", ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(temp, text);
            try {
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    private static Map<String, String> entry(Finding finding) {
        Map<String, String> entry = new LinkedHashMap<>();
        entry.put("file", finding.file());
        entry.put("key", finding.key());
        entry.put("command", finding.command());
        return entry;
    }

    private static String digest(String text) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

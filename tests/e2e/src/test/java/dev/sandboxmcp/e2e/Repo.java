package dev.sandboxmcp.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Paths in this repository and facts about the user running the tests. */
final class Repo {

    private Repo() {
    }

    static Path root() {
        String configured = System.getProperty("repo.root");
        Path root = configured != null ? Path.of(configured) : Path.of("..", "..");
        return root.toAbsolutePath().normalize();
    }

    static Path path(String relative) {
        return root().resolve(relative);
    }

    /** The UID:GID the container runs as: the host user's, or 1000:1000 when the host user is root. */
    static int sandboxUid() {
        int uid = hostUid();
        return uid == 0 ? 1000 : uid;
    }

    static int sandboxGid() {
        return hostUid() == 0 ? 1000 : hostGid();
    }

    static int hostUid() {
        return attribute("unix:uid");
    }

    static int hostGid() {
        return attribute("unix:gid");
    }

    private static int attribute(String name) {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), name);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the test process's " + name, e);
        }
    }
}

package dev.sandboxmcp.workspace;

import java.nio.file.Path;
import java.util.Arrays;

/** Rewrites one file through the workspace forever, each version one repeated byte; killed by the test. */
public final class WorkspaceWriterMain {

    private WorkspaceWriterMain() {
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        int size = Integer.parseInt(args[1]);
        try (Workspace workspace = Workspace.open(root)) {
            for (int version = 0; ; version++) {
                byte[] content = new byte[size];
                Arrays.fill(content, (byte) ('a' + version % 26));
                workspace.writeFile("target.bin", content);
                System.out.println("wrote " + version);
            }
        }
    }
}

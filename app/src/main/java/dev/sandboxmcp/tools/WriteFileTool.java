package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.DiskFloor;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code write_file}: replace (atomically) or append UTF-8 text beneath the workspace. */
final class WriteFileTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": %d,
                  "description": "File path relative to the workspace root. Its directory must exist."},
                "content": {"type": "string", "description": "UTF-8 text to write."},
                "append": {"type": "boolean", "default": false,
                  "description": "Append to the file (creating it if missing) instead of replacing it."}
              },
              "required": ["path", "content"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "bytes_written": {"type": "integer"},
                "appended": {"type": "boolean"}
              },
              "required": ["path", "bytes_written", "appended"]
            }""";

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("write_file", "Write a text file",
                "Write UTF-8 text to a file beneath the workspace (at most " + limits.fileMaxBytes() / 1024 + " KiB per call). "
                        + "Replacing is atomic: readers see the old file or the new one, never a mix; the file keeps its "
                        + "permissions. With append=true the text is added at the end. The directory must already exist."
                        + DiskFloorText.refusesWrites(limits),
                INPUT_SCHEMA.formatted(Names.MAX_PATH_CHARS), OUTPUT_SCHEMA, Hints.destructive())
                .target("path")
                .instructions("write_file: writes UTF-8 text, at most " + limits.fileMaxBytes() / 1024 + " KiB per call; "
                        + "replacing is atomic, append=true appends. The parent directory must exist (run_command mkdir -p).");
    }

    private final Workspace workspace;
    private final int maxBytes;
    private final DiskFloor floor;

    WriteFileTool(Workspace workspace, Limits limits) {
        super(spec(limits));
        this.workspace = workspace;
        this.maxBytes = limits.fileMaxBytes();
        this.floor = DiskFloor.of(limits);
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String path = arguments.requiredString("path");
        String content = arguments.requiredString("content");
        boolean append = arguments.optionalBoolean("append", false);
        byte[] bytes = TextDecoding.encode(content);
        if (bytes == null) {
            throw new ToolRefusal("content is not valid Unicode text (an unpaired surrogate escape?); nothing was written");
        }
        if (bytes.length > maxBytes) {
            throw new ToolRefusal("content is " + bytes.length + " bytes, over the limit of " + maxBytes
                    + " bytes per call; nothing was written. Write the first part, then add the rest with append=true");
        }
        DiskFloorText.refuseBelow(floor, workspace.root(), bytes.length, "written");
        try {
            if (append) {
                workspace.appendFile(path, bytes);
            } else {
                workspace.writeFile(path, bytes);
            }
        } catch (IOException e) {
            throw WorkspaceErrors.refusal(path, "write", e);
        }
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("path", path);
        structured.put("bytes_written", bytes.length);
        structured.put("appended", append);
        String text = (append ? "appended " : "wrote ") + bytes.length + " bytes to " + Names.display(path);
        return ToolResponse.success(text, structured, path, (long) bytes.length);
    }
}

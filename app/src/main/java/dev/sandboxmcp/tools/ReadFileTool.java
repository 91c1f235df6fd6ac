package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import dev.sandboxmcp.workspace.WorkspaceException;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code read_file}: the UTF-8 text of a file beneath the workspace. */
public final class ReadFileTool implements SandboxTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string", "minLength": 1,
                  "description": "File path relative to the workspace root, e.g. 'src/main.go'."}
              },
              "required": ["path"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "bytes": {"type": "integer"}
              },
              "required": ["path", "content", "bytes"]
            }""";

    private final Workspace workspace;
    private final int maxBytes;
    private final McpSchema.Tool definition;

    public ReadFileTool(Workspace workspace, Limits limits) {
        this.workspace = workspace;
        this.maxBytes = limits.fileMaxBytes();
        this.definition = Schemas.tool("read_file", "Read a text file",
                "Read a UTF-8 text file beneath the workspace (at most " + maxBytes / 1024
                        + " KiB). Paths are relative to the workspace root and cannot leave it.",
                INPUT_SCHEMA, OUTPUT_SCHEMA, Schemas.annotations("Read a text file", true, false, true, false));
    }

    @Override
    public McpSchema.Tool definition() {
        return definition;
    }

    @Override
    public ToolResponse call(ToolArguments arguments) throws ToolInputException {
        String path = arguments.requiredString("path");
        byte[] bytes;
        try {
            bytes = workspace.readFile(path, maxBytes);
        } catch (WorkspaceException e) {
            return ToolResponse.failure(path, e.getMessage());
        } catch (IOException e) {
            return ToolResponse.failure(path, "could not read '" + path + "': " + e.getMessage());
        }
        String content;
        try {
            content = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return ToolResponse.failure(path, "'" + path + "' is not valid UTF-8 text (a binary file?); inspect it with "
                    + "run_command, e.g. file, xxd or hexdump");
        }
        if (content.indexOf('\0') >= 0) {
            return ToolResponse.failure(path, "'" + path + "' contains NUL bytes, so it is binary, not text; inspect it "
                    + "with run_command, e.g. file, xxd or hexdump");
        }
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("path", path);
        structured.put("content", content);
        structured.put("bytes", bytes.length);
        return ToolResponse.success(content, structured, path, (long) bytes.length);
    }
}

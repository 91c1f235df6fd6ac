package dev.sandboxmcp.hostaudit;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.core.JacksonException;
import tools.jackson.core.json.JsonReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The tasks of a {@code .vscode/tasks.json} that VS Code runs by itself when the folder opens
 * ({@code "runOptions": {"runOn": "folderOpen"}}). The file is JSON with comments and trailing
 * commas, as VS Code reads it.
 */
final class VsCodeTasks {

    /** A task that runs on folder open: its label and the command line it runs. */
    record AutoTask(String label, String command) {
    }

    private static final JsonMapper JSONC = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS, JsonReadFeature.ALLOW_TRAILING_COMMA,
                    JsonReadFeature.ALLOW_SINGLE_QUOTES, JsonReadFeature.ALLOW_UNQUOTED_PROPERTY_NAMES)
            .build();

    private VsCodeTasks() {
    }

    /** The folder-open tasks; throws when the file cannot be read as JSON with comments. */
    static List<AutoTask> folderOpenTasks(String text) throws JacksonException {
        JsonNode root = JSONC.readTree(text);
        List<AutoTask> tasks = new ArrayList<>();
        for (JsonNode task : root.path("tasks")) {
            if (!runsOnFolderOpen(task)) {
                continue;
            }
            StringBuilder command = new StringBuilder(describe(task.path("command")));
            for (JsonNode arg : task.path("args")) {
                command.append(' ').append(describe(arg));
            }
            for (String platform : List.of("linux", "osx", "windows")) {
                if (task.path(platform).has("command")) {
                    command.append(" [").append(platform).append(": ").append(describe(task.path(platform).path("command")))
                            .append(']');
                }
            }
            String label = task.path("label").isString() ? task.path("label").asString() : "(no label)";
            tasks.add(new AutoTask(label, command.toString().strip()));
        }
        return tasks;
    }

    private static boolean runsOnFolderOpen(JsonNode task) {
        JsonNode runOn = task.path("runOptions").path("runOn");
        return runOn.isString() && runOn.asString().toLowerCase(Locale.ROOT).equals("folderopen");
    }

    private static String describe(JsonNode node) {
        if (node.isMissingNode() || node.isNull()) {
            return "";
        }
        return node.isString() ? node.asString() : node.toString();
    }
}

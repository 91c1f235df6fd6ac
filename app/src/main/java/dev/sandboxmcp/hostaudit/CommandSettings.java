package dev.sandboxmcp.hostaudit;

import java.util.Locale;
import java.util.Set;

/**
 * Which git configuration entries make git run a command (or read more configuration, which may
 * hold one): the list git's own documentation gives for each key, as {@code git config --list}
 * spells a key (section and name in lower case, the subsection as written).
 */
final class CommandSettings {

    private static final Set<String> CORE = Set.of("fsmonitor", "hookspath", "sshcommand", "pager", "editor", "askpass",
            "gitproxy", "alternaterefscommand");
    private static final Set<String> SEND_EMAIL = Set.of("sendmailcmd", "smtpserver", "tocmd", "cccmd");

    private CommandSettings() {
    }

    /** Whether {@code key = value} runs a command, or names something that can. */
    static boolean runsCommand(String key, String value) {
        int firstDot = key.indexOf('.');
        int lastDot = key.lastIndexOf('.');
        if (firstDot < 0) {
            return false;
        }
        String section = key.substring(0, firstDot).toLowerCase(Locale.ROOT);
        String name = key.substring(lastDot + 1).toLowerCase(Locale.ROOT);
        String subsection = firstDot == lastDot ? null : key.substring(firstDot + 1, lastDot);
        boolean sub = subsection != null;
        String v = value == null ? "" : value.strip();
        return switch (section) {
            case "core" -> CORE.contains(name);
            case "diff" -> sub ? name.equals("textconv") || name.equals("command") : name.equals("external");
            case "merge" -> sub && name.equals("driver");
            case "filter" -> sub && (name.equals("clean") || name.equals("smudge") || name.equals("process"));
            case "credential" -> name.equals("helper");
            case "gpg" -> name.equals("program") || name.equals("defaultkeycommand");
            case "sequence" -> name.equals("editor");
            case "alias" -> v.startsWith("!");
            case "include" -> name.equals("path");
            case "includeif" -> sub && name.equals("path");
            case "pager" -> !isBoolean(v);
            case "interactive" -> name.equals("difffilter");
            case "remote" -> sub && (name.equals("uploadpack") || name.equals("receivepack"));
            case "uploadpack" -> name.equals("packobjectshook");
            case "difftool", "mergetool", "man", "browser" -> sub && (name.equals("cmd") || name.equals("path"));
            case "web" -> name.equals("browser");
            case "sendemail" -> SEND_EMAIL.contains(name);
            case "submodule" -> sub && name.equals("update") && v.startsWith("!");
            case "trailer" -> sub && (name.equals("cmd") || name.equals("command"));
            case "lfs" -> sub && name.equals("path");
            case "protocol" -> "ext".equalsIgnoreCase(subsection) && name.equals("allow");
            case "url" -> sub && subsection.toLowerCase(Locale.ROOT).startsWith("ext::");
            default -> false;
        };
    }

    private static boolean isBoolean(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "", "true", "false", "yes", "no", "on", "off", "1", "0" -> true;
            default -> false;
        };
    }
}

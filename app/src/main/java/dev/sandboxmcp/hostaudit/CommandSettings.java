package dev.sandboxmcp.hostaudit;

import java.util.Locale;
import java.util.Set;

/**
 * Which git configuration entries make git run a program (or read more configuration, which may
 * hold one), as {@code git config --list} spells a key (section and name in lower case, the
 * subsection as written). Taken from git's documentation, Documentation/config/*.adoc of git 2.55
 * (and the .txt files of 2.39.5), each key's text read for "command", "program", "helper", "shell",
 * "tool"; what it runs is in the comment of each row. {@code http.*} runs none (its helpers are
 * {@code credential.*}).
 */
final class CommandSettings {

    /** core.*: fsmonitor (a hook program), hooksPath (where hooks are), the ssh, editor, pager, askpass, proxy programs. */
    private static final Set<String> CORE = Set.of("fsmonitor", "hookspath", "sshcommand", "pager", "editor", "askpass",
            "gitproxy", "alternaterefscommand");
    /** sendemail.* and sendemail.<identity>.*: the sendmail program (smtpServer as a path too) and the address commands. */
    private static final Set<String> SEND_EMAIL = Set.of("sendmailcmd", "smtpserver", "tocmd", "cccmd", "headercmd");

    private CommandSettings() {
    }

    /** Whether {@code key = value} runs a program, or names something that can. */
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
            // Every alias, not only alias.x = !cmd and the ones that start with an option (-c,
            // --exec-path, ...): git unquotes an alias before it reads it ("-c" is -c), and plain
            // subcommands run programs as well (fetch --upload-pack=, grep -O, difftool -x, rebase
            // --exec, submodule foreach). Every key with a subsection too: git 2.55's alias
            // "x".command, and before it git takes alias.x.y as the alias "x.y" (git x.y runs it).
            case "alias" -> true;
            case "include" -> name.equals("path");
            case "includeif" -> sub && name.equals("path");
            case "pager" -> !isBoolean(v);
            case "interactive" -> name.equals("difffilter");
            // uploadpack/receivepack: the program run on the other side; vcs: git-remote-<vcs>, a path when it holds a slash
            case "remote" -> sub && (name.equals("uploadpack") || name.equals("receivepack") || name.equals("vcs")
                    || (name.equals("url") || name.equals("pushurl")) && isExt(v));
            case "uploadpack" -> name.equals("packobjectshook");
            case "difftool", "mergetool", "man", "browser", "guitool" -> sub && (name.equals("cmd") || name.equals("path"));
            case "web", "help" -> name.equals("browser");
            case "instaweb" -> name.equals("httpd") || name.equals("browser");
            case "sendemail" -> SEND_EMAIL.contains(name);
            case "imap" -> name.equals("tunnel");
            case "submodule" -> sub && (name.equals("update") && v.startsWith("!") || name.equals("url") && isExt(v));
            case "trailer" -> sub && (name.equals("cmd") || name.equals("command"));
            case "lfs" -> sub && (name.equals("path") || name.equals("clean") || name.equals("smudge"));
            // protocol.allow (any protocol not named otherwise, ext:: included) and protocol.ext.allow
            case "protocol" -> name.equals("allow") && (!sub || "ext".equalsIgnoreCase(subsection))
                    && !v.equalsIgnoreCase("never");
            case "url" -> sub && isExt(subsection);
            // git hook run's configured hooks (git 2.54 and later)
            case "hook" -> sub && name.equals("command");
            case "gc" -> name.equals("recentobjectshook");
            // git archive's compressors
            case "tar" -> sub && name.equals("command");
            // git init and clone copy the hooks of the template directory
            case "init" -> name.equals("templatedir");
            default -> false;
        };
    }

    /** A URL of the ext:: transport, which runs its address as a command. */
    private static boolean isExt(String url) {
        return url.strip().toLowerCase(Locale.ROOT).startsWith("ext::");
    }

    private static boolean isBoolean(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "", "true", "false", "yes", "no", "on", "off", "1", "0" -> true;
            default -> false;
        };
    }
}

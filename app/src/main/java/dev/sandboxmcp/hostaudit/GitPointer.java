package dev.sandboxmcp.hostaudit;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The two files through which git takes its configuration and hooks from another directory, parsed
 * byte for byte as git parses them (setup.c, the same in git 2.39.5 and 2.55): a {@code .git}
 * file's {@code gitdir: } line ({@code read_gitfile_gently}) and a git directory's
 * {@code commondir} ({@code get_common_dir_noenv}). Both keep the whole content and remove only
 * trailing CR and LF: a leading or inner space, or an inner newline, is part of the path, and the
 * path ends at the first NUL (git then uses it as a C string). Relative paths are git's to
 * resolve: against the {@code .git} file's directory, or the git directory.
 */
final class GitPointer {

    private static final String GITDIR_PREFIX = "gitdir: ";

    private GitPointer() {
    }

    /** The path a {@code .git} file names, or empty when git refuses the file (no {@code gitdir: }, no path). */
    static Optional<String> gitdir(byte[] content) {
        String text = new String(content, StandardCharsets.ISO_8859_1);
        if (!text.startsWith(GITDIR_PREFIX)) {
            return Optional.empty();
        }
        String path = cString(stripTrailingLineEnds(text).substring(GITDIR_PREFIX.length()));
        return path.isEmpty() ? Optional.empty() : Optional.of(utf8(path));
    }

    /** The path a {@code commondir} names; git stops ("failed to read") on an empty file, so nothing runs then. */
    static Optional<String> commondir(byte[] content) {
        String path = cString(stripTrailingLineEnds(new String(content, StandardCharsets.ISO_8859_1)));
        return content.length == 0 ? Optional.empty() : Optional.of(utf8(path));
    }

    private static String stripTrailingLineEnds(String text) {
        int end = text.length();
        while (end > 0 && (text.charAt(end - 1) == '\n' || text.charAt(end - 1) == '\r')) {
            end--;
        }
        return text.substring(0, end);
    }

    private static String cString(String text) {
        int nul = text.indexOf('\0');
        return nul < 0 ? text : text.substring(0, nul);
    }

    /** Bytes were kept one char each (ISO-8859-1) while parsing; the path is read as the file system's UTF-8. */
    private static String utf8(String latin1) {
        return new String(latin1.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
    }
}

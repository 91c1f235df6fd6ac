package dev.sandboxmcp.hostaudit;

import dev.sandboxmcp.workspace.OpenedFile;
import dev.sandboxmcp.workspace.PinnedFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A file as its stat data says it is (device and inode, size, modification and change times): the
 * key under which what a check found of it is kept. Any write gives a file another, but for the
 * cases the checks name (a write through a shared mapping to a page still dirty moves no time).
 */
record FileIdentity(String fileKey, long size, long modifiedNanos, long changedNanos) {

    /** The attributes {@link #of(Map)} reads, for a caller that reads more of them at once. */
    static final String ATTRIBUTES = "unix:fileKey,size,lastModifiedTime,ctime";

    static FileIdentity of(Path file) throws IOException {
        return of(Files.readAttributes(file, ATTRIBUTES));
    }

    /** From attributes read with at least {@link #ATTRIBUTES}. */
    static FileIdentity of(Map<String, Object> stat) {
        return new FileIdentity(String.valueOf(stat.get("fileKey")), (Long) stat.get("size"),
                ((FileTime) stat.get("lastModifiedTime")).to(TimeUnit.NANOSECONDS),
                ((FileTime) stat.get("ctime")).to(TimeUnit.NANOSECONDS));
    }

    static FileIdentity of(PinnedFile.Stat stat) {
        return new FileIdentity(stat.fileKey(), stat.size(), stat.modified().to(TimeUnit.NANOSECONDS),
                stat.changed().to(TimeUnit.NANOSECONDS));
    }

    static FileIdentity of(OpenedFile opened) {
        return new FileIdentity(String.valueOf(opened.fileKey()), opened.size(), opened.modified().to(TimeUnit.NANOSECONDS),
                opened.changed().to(TimeUnit.NANOSECONDS));
    }

    /** As {@link #parse} reads it: {@code (dev=...,ino=...)/size/modified/changed}. */
    @Override
    public String toString() {
        return fileKey + "/" + size + "/" + modifiedNanos + "/" + changedNanos;
    }

    static FileIdentity parse(String text) {
        String[] fields = text.split("/");
        if (fields.length != 4 || !fields[0].startsWith("(dev=")) {
            throw new IllegalArgumentException("not an identity: " + text);
        }
        return new FileIdentity(fields[0], Long.parseLong(fields[1]), Long.parseLong(fields[2]), Long.parseLong(fields[3]));
    }
}

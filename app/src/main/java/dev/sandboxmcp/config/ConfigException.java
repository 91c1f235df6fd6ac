package dev.sandboxmcp.config;

/** A setting that is missing or malformed; the message is the one line printed at start-up. */
public final class ConfigException extends Exception {
    public ConfigException(String message) {
        super(message);
    }
}

package dev.sandboxmcp.audit;

import java.time.Instant;

/**
 * One tool call as it begins, before anything of it has run: so that a call that never ends (the
 * server stopped, or killed, meanwhile) is in the audit all the same. Its {@link AuditEvent} carries
 * the same {@code call} number.
 *
 * @param call   the call's number in this server's run ({@link AuditLog#run()}), from {@link AuditLog#nextCall()}
 * @param target the command line or the path the call names
 * @param client the caller's address, as far as the trusted proxies vouch for it
 * @param peer   the address of the TCP peer (a proxy, when there is one)
 */
public record CallStarted(long call, Instant time, String tool, String target, String client, String peer) {
}

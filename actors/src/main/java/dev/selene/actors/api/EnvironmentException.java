package dev.selene.actors.api;

/**
 * A node that cannot start on this machine as configured: a disk directory another node uses, host memory that
 * cannot be mapped, pool managers that cannot be reached. Its message is one line naming what to change; it is the
 * operator's to fix, unlike a failure inside the node (a plain {@link IllegalStateException}).
 */
public final class EnvironmentException extends IllegalStateException {

    public EnvironmentException(String message) {
        super(message);
    }
}

package dev.selene.node.admin;

/** Whether the node takes traffic ({@code GET /ready}): not before it is up, nor while it drains or stops. */
public final class Readiness {

    private volatile String notReadyBecause = "starting";

    public void ready() {
        notReadyBecause = null;
    }

    public void notReady(String because) {
        notReadyBecause = because;
    }

    public boolean isReady() {
        return notReadyBecause == null;
    }

    /** Why the node is not ready, or null. */
    public String reason() {
        return notReadyBecause;
    }
}

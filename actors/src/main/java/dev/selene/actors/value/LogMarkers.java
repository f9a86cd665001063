package dev.selene.actors.value;

import org.slf4j.Marker;
import org.slf4j.MarkerFactory;

/** Markers on the node's log lines, for a logging setup that routes some lines apart. */
public final class LogMarkers {

    /**
     * A line that says why the node could not start, in the same words as the failure its starter receives (the
     * exception of {@code SeleneCache.start}, or the answer to a readiness request). A command line that prints that
     * failure once may keep these lines out of its terminal; a log file should keep them.
     */
    public static final Marker START_FAILURE = MarkerFactory.getMarker("SELENE_START_FAILURE");

    private LogMarkers() {
    }
}

package dev.selene.actors.cache;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Observes the error lines the node's actors log (a logback list appender on the cache package's logger), so that a
 * test can say which failure stopped a node rather than only that it stopped.
 */
final class CapturedErrors implements AutoCloseable {

    private final Logger logger = (Logger) LoggerFactory.getLogger("dev.selene.actors.cache");
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    CapturedErrors() {
        appender.setContext(logger.getLoggerContext());
        appender.start();
        logger.addAppender(appender);
    }

    /** The formatted error lines logged since this was made. */
    List<String> lines() {
        synchronized (appender) {
            return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
                    .map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
    }
}

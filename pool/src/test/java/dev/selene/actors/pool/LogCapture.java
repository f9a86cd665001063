package dev.selene.actors.pool;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The INFO and ERROR lines one class logs while the capture is open (the tests' logging configuration shows warnings
 * only, so the logger is set to INFO and kept from the console meanwhile); {@link #close()} puts the logger back.
 */
final class LogCapture implements AutoCloseable {

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger logger;
    private final Level level;

    LogCapture(Class<?> source) {
        logger = (Logger) LoggerFactory.getLogger(source);
        level = logger.getLevel();
        appender.start();
        logger.setLevel(Level.INFO);
        logger.setAdditive(false);
        logger.addAppender(appender);
    }

    /** The INFO lines logged so far, formatted. */
    List<String> infoLines() {
        synchronized (appender.list) {
            return appender.list.stream().filter(e -> e.getLevel() == Level.INFO)
                    .map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    /** The WARN lines logged so far, formatted. */
    List<String> warnLines() {
        synchronized (appender.list) {
            return appender.list.stream().filter(e -> e.getLevel() == Level.WARN)
                    .map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    /** The ERROR lines logged so far, formatted, each followed by " [exception class]" where one was logged with it. */
    List<String> errorLines() {
        synchronized (appender.list) {
            return appender.list.stream().filter(e -> e.getLevel() == Level.ERROR)
                    .map(e -> e.getFormattedMessage() + (e.getThrowableProxy() == null ? ""
                            : " [" + e.getThrowableProxy().getClassName() + "]")).toList();
        }
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        logger.setAdditive(true);
        logger.setLevel(level);
    }
}

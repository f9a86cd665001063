package dev.selene.node.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.filter.ThresholdFilter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import dev.selene.actors.value.LogMarkers;
import dev.selene.node.Failures;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/**
 * What a command's log lines look like on the terminal: warnings and errors only unless {@code --verbose}, and,
 * for a long-running command, every line at the configured level into a log file as well. Closing it puts the
 * logging back as it was (commands also run inside tests, one after another, in one JVM).
 */
public final class ConsoleLogging implements AutoCloseable {

    /** The pattern of a log file's lines: the date as well, since a node runs for days. */
    static final String FILE_PATTERN = "%d{yyyy-MM-dd HH:mm:ss.SSS} %-5level [%thread] %logger{0} - %msg%n";

    private final List<Runnable> undo = new ArrayList<>();

    private ConsoleLogging() {
    }

    /**
     * The terminal shows warnings and errors only (Pekko's errors only: its warnings as a run's nodes stop are
     * not the run's outcome), unless {@code verbose}; nothing goes to a file.
     */
    public static ConsoleLogging quiet(boolean verbose) {
        ConsoleLogging logging = new ConsoleLogging();
        if (!verbose && LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
            logging.setLevel(ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME), Level.WARN);
            logging.setLevel(ctx.getLogger("org.apache.pekko"), Level.ERROR);
        }
        return logging;
    }

    /**
     * Every line at the configured level goes to {@code file} (appended to; created now, with its directory), and the
     * terminal shows warnings and errors only, unless {@code verbose}.
     */
    public static ConsoleLogging toFile(Path file, boolean verbose) {
        ConsoleLogging logging = new ConsoleLogging();
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
            return logging;
        }
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(ctx);
        encoder.setPattern(FILE_PATTERN);
        encoder.start();
        FileAppender<ILoggingEvent> appender = new FileAppender<>();
        appender.setContext(ctx);
        appender.setName("selene-log-file");
        appender.setFile(file.toString());
        appender.setAppend(true);
        appender.setEncoder(encoder);
        appender.start();
        root.addAppender(appender);
        logging.undo.add(() -> {
            root.detachAppender(appender);
            appender.stop();
        });
        if (!verbose) {
            logging.forEachConsole(root, console -> {
                List<Filter<ILoggingEvent>> before = console.getCopyOfAttachedFiltersList();
                ThresholdFilter warnings = new ThresholdFilter();
                warnings.setContext(ctx);
                warnings.setLevel(Level.WARN.levelStr);
                warnings.start();
                console.addFilter(warnings);
                console.addFilter(notForTheTerminal());
                logging.undo.add(() -> {
                    console.clearAllFilters();
                    before.forEach(console::addFilter);
                });
            });
        }
        return logging;
    }

    /**
     * What the terminal of a command with a log file leaves out (the file keeps it): the node's lines that say why it
     * could not start (the command prints that reason once, as its last line), and Pekko's stream warnings (a
     * connection to a peer that went away, logged as the node stops or a member leaves; the cluster's own lines say
     * what happened to the member).
     */
    static Filter<ILoggingEvent> notForTheTerminal() {
        Filter<ILoggingEvent> f = new Filter<>() {
            @Override
            public FilterReply decide(ILoggingEvent e) {
                if (e.getMarkerList() != null && e.getMarkerList().contains(LogMarkers.START_FAILURE)) {
                    return FilterReply.DENY;
                }
                if (e.getLoggerName().startsWith("org.apache.pekko.stream") && !e.getLevel().isGreaterOrEqual(
                        Level.ERROR)) {
                    return FilterReply.DENY;
                }
                return FilterReply.NEUTRAL;
            }
        };
        f.start();
        return f;
    }

    /**
     * Why {@code file} cannot be a log file, or null when it can: no file is named, it is a directory, its directory
     * cannot be created, or it cannot be opened for appending. Tried, not predicted from permissions (which a
     * superuser passes even where the file system refuses, as under /proc): the missing directories are created and
     * the file is opened for appending and closed, as the log is about to be.
     */
    public static String unusable(Path file) {
        if (file.toString().isBlank()) {
            return "no file is named";
        }
        Path abs = file.toAbsolutePath().normalize();
        if (Files.isDirectory(abs)) {
            return "it is a directory";
        }
        if (Files.exists(abs) && !Files.isRegularFile(abs)) {
            return "it is not a regular file"; // a pipe would block the node until something reads it
        }
        Path dir = abs.getParent();
        try {
            if (dir != null) {
                Files.createDirectories(dir);
            }
        } catch (IOException e) {
            Path existing = dir;
            while (existing != null && !Files.exists(existing)) {
                existing = existing.getParent();
            }
            return "its directory cannot be created (" + (existing != null && !Files.isDirectory(existing)
                    ? existing + " is not a directory" : Failures.io(e)) + ")";
        }
        try {
            Files.newOutputStream(abs, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                    StandardOpenOption.WRITE).close();
            return null;
        } catch (IOException e) {
            return "it cannot be written (" + Failures.io(e) + ")";
        }
    }

    private void setLevel(Logger logger, Level level) {
        Level before = logger.getLevel();
        logger.setLevel(level);
        undo.add(() -> logger.setLevel(before));
    }

    private void forEachConsole(Logger root, Consumer<ConsoleAppender<ILoggingEvent>> action) {
        for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
            if (it.next() instanceof ConsoleAppender<ILoggingEvent> console) {
                action.accept(console);
            }
        }
    }

    /** Puts the logging back as it was before. */
    @Override
    public void close() {
        for (int i = undo.size() - 1; i >= 0; i--) {
            undo.get(i).run();
        }
        undo.clear();
    }
}

package dev.selene.actors.pool;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A test main class of this package running in a JVM of its own: the child speaks a line protocol (lines on its
 * stdout that start with {@link #PREFIX}; commands on its stdin, each with a request number its answer repeats),
 * logs to a file, and exits when its stdin closes, so a child never outlives the test JVM. {@link #kill()} is
 * {@code kill -9} ({@link Process#destroyForcibly()} sends SIGKILL on Linux).
 */
final class ChildJvm implements AutoCloseable {

    /** What a protocol line starts with; anything else a child prints on stdout is not protocol. */
    static final String PREFIX = "@selene ";

    /** How much of a child's log a failure message carries. */
    private static final int LOG_TAIL_LINES = 25;

    /** Flags of every child, as the build gives the test JVM, with a small heap and little JIT work. */
    private static final List<String> JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED",
            "--sun-misc-unsafe-memory-access=allow", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dlogback.configurationFile=pool-process-logback.xml");

    /** Where the children's copy of this JVM's class directories goes. */
    private static final Path CLASS_SNAPSHOT = Path.of("target", "pool-kill-classpath",
            String.valueOf(ProcessHandle.current().pid()));

    /** The children's class path, made on first use. Guarded by the class. */
    private static String classPath;

    private final String name;
    private final Process process;
    private final Path log;
    private final Writer stdin;
    private final AtomicInteger requests = new AtomicInteger();
    /** Protocol lines received, prefix stripped, in order. Guarded by itself. */
    private final List<String> lines = new ArrayList<>();
    private boolean ended;

    private ChildJvm(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.stdin = process.outputWriter(StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readStdout, "child-" + name + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code main} with {@code args} on this JVM's java binary and class path, logging to {@code logDir}. */
    static ChildJvm start(String name, Class<?> main, Path logDir, List<String> args) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElseThrow(() -> new IllegalStateException("the test JVM's java binary is unknown"));
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(JVM_FLAGS);
        command.add("-cp");
        command.add(classPath());
        command.add(main.getName());
        command.addAll(args);
        Files.createDirectories(logDir);
        Path log = logDir.resolve(name + ".log");
        Files.writeString(log, "# " + String.join(" ", args) + System.lineSeparator(), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new ChildJvm(name, p, log);
    }

    /**
     * This JVM's class path with each class directory replaced by a copy taken on first use: a build of the same
     * working tree that recompiles meanwhile deletes and rewrites class files under a child, which loads its classes
     * lazily (a child then fails with a missing class).
     */
    private static synchronized String classPath() throws IOException {
        if (classPath == null) {
            List<String> entries = new ArrayList<>();
            int copies = 0;
            for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                Path dir = Path.of(entry);
                if (Files.isDirectory(dir)) {
                    Path copy = CLASS_SNAPSHOT.resolve(String.valueOf(copies++)).toAbsolutePath();
                    copyTree(dir, copy);
                    entries.add(copy.toString());
                } else {
                    entries.add(entry);
                }
            }
            classPath = String.join(File.pathSeparator, entries);
        }
        return classPath;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private void readStdout() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith(PREFIX)) {
                    synchronized (lines) {
                        lines.add(line.substring(PREFIX.length()));
                        lines.notifyAll();
                    }
                }
            }
        } catch (IOException e) {
            // the child died: its stdout closed
        } finally {
            synchronized (lines) {
                ended = true;
                lines.notifyAll();
            }
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Protocol lines received so far. */
    int lineCount() {
        synchronized (lines) {
            return lines.size();
        }
    }

    /** Protocol lines received so far that start with {@code kind}, the kind and its space stripped. */
    List<String> linesOf(String kind) {
        synchronized (lines) {
            return lines.stream().filter(l -> l.startsWith(kind + " ")).map(l -> l.substring(kind.length() + 1))
                    .toList();
        }
    }

    /** The first protocol line from index {@code from} that starts with {@code kind}, without the kind; waits. */
    String await(String kind, int from, Duration timeout) throws InterruptedException {
        return awaitLine(from, l -> l.startsWith(kind + " "), timeout, "a '" + kind + "' line")
                .substring(kind.length() + 1);
    }

    private String awaitLine(int from, Predicate<String> match, Duration timeout, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lines) {
            while (true) {
                for (int i = from; i < lines.size(); i++) {
                    if (match.test(lines.get(i))) {
                        return lines.get(i);
                    }
                }
                long left = deadline - System.nanoTime();
                if (ended || left <= 0) {
                    throw new AssertionError(name + " gave no " + what + " within " + timeout.toSeconds() + " s ("
                            + (ended ? "it exited with " + exitCode() : "still running") + "); its log: "
                            + log.toAbsolutePath() + ", ending:" + System.lineSeparator() + logTail(LOG_TAIL_LINES));
                }
                lines.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    /**
     * Sends {@code command} with a request number and {@code args}, and returns its answer's fields,
     * {@code key=value} each.
     */
    Map<String, String> request(String command, Duration timeout, String... args)
            throws IOException, InterruptedException {
        int id = requests.incrementAndGet();
        int from = lineCount();
        synchronized (stdin) {
            stdin.write(command + " " + id + (args.length == 0 ? "" : " " + String.join(" ", args)) + "\n");
            stdin.flush();
        }
        String answer = awaitLine(from, l -> l.startsWith(command + " " + id + " ") || l.equals(command + " " + id),
                timeout, "answer to '" + command + "'");
        Map<String, String> fields = new LinkedHashMap<>();
        for (String word : answer.split(" ")) {
            int eq = word.indexOf('=');
            if (eq > 0) {
                fields.put(word.substring(0, eq), word.substring(eq + 1));
            }
        }
        return fields;
    }

    /** Stops the child with SIGSTOP: it answers nothing, its sockets stay open, as a hung process. */
    void freeze() throws IOException, InterruptedException {
        Process stop = new ProcessBuilder("kill", "-STOP", String.valueOf(pid())).inheritIO().start();
        if (!stop.waitFor(10, TimeUnit.SECONDS) || stop.exitValue() != 0) {
            throw new IllegalStateException("could not SIGSTOP " + this);
        }
    }

    /** Resumes a child stopped by {@link #freeze()} (SIGCONT). */
    void thaw() throws IOException, InterruptedException {
        Process cont = new ProcessBuilder("kill", "-CONT", String.valueOf(pid())).inheritIO().start();
        if (!cont.waitFor(10, TimeUnit.SECONDS) || cont.exitValue() != 0) {
            throw new IllegalStateException("could not SIGCONT " + this);
        }
    }

    /** Kills the child with SIGKILL and waits until it is gone. */
    void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + " (pid " + pid() + ") did not die within 10 s of SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The child's exit code; a child whose stdout just closed is given a few seconds to finish exiting. */
    private String exitCode() {
        try {
            if (process.waitFor(5, TimeUnit.SECONDS)) {
                return String.valueOf(process.exitValue());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "nothing yet";
    }

    Path log() {
        return log;
    }

    /**
     * The last {@code n} lines of the child's log, for a failure message: the log is gone with a clean build's
     * working copy, the message stays in the test report.
     */
    String logTail(int n) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - n), all.size()));
        } catch (IOException | RuntimeException e) {
            return "(its log could not be read: " + e + ")";
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ")";
    }

    // ---- the child's side ----

    /** A command a child answers: given the words after the command and its number, the answer's fields. */
    @FunctionalInterface
    interface Handler {
        String answer(List<String> args) throws Exception;
    }

    /** Prints a protocol line (in the child). */
    static void say(String line) {
        synchronized (System.out) {
            System.out.println(PREFIX + line);
            System.out.flush();
        }
    }

    /**
     * Answers the commands on stdin, one at a time, until stdin closes (the test is done with the child, or the test
     * JVM died), then halts this JVM (in the child). A failed command is answered with {@code error=...}.
     */
    static void serve(Map<String, Handler> handlers) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                List<String> words = List.of(line.trim().split(" "));
                if (words.size() < 2) {
                    continue;
                }
                Handler h = handlers.get(words.get(0));
                String answer;
                try {
                    answer = h == null ? "error=unknown-command" : h.answer(words.subList(2, words.size()));
                } catch (Exception e) {
                    answer = "error=" + e.getClass().getSimpleName();
                    e.printStackTrace();
                }
                say(words.get(0) + " " + words.get(1) + " " + answer);
            }
        } catch (IOException e) {
            // stdin is gone: the same as closed
        }
        Runtime.getRuntime().halt(0);
    }
}

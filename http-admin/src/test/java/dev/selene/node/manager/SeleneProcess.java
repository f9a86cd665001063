package dev.selene.node.manager;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.transport.pool.LoopbackPorts;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real {@code selene} command in a child process, started as the {@code ./selene} script starts it (this JVM's java
 * and class path): its standard error and output go to a log file the test reads; signals go to it by its pid
 * ({@code kill -STOP}, {@code -CONT}, {@code -KILL}, {@code -TERM}).
 */
final class SeleneProcess implements AutoCloseable {

    private static final Pattern ADMIN = Pattern.compile("admin http://127\\.0\\.0\\.1:(\\d+)/");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final String name;
    private final Process process;
    private final Path log;
    private int adminPort;

    private SeleneProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code selene args...}, its output in {@code dir/name.log}. */
    static SeleneProcess start(Path dir, String name, String... args) throws IOException {
        Files.createDirectories(dir);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx512m",
                "-Dlogback.configurationFile=logback.xml", "-cp", classpath(), "dev.selene.node.cli.SeleneMain"));
        cmd.addAll(List.of(args));
        Path log = dir.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(new File(".")).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("SELENE_LOG_LEVEL", "INFO");
        return new SeleneProcess(name, pb.start(), log);
    }

    /**
     * Starts {@code selene manager} on the small layout at {@code 127.0.0.1:port} with {@code seed} as its seed, two
     * replicas, a store of {@code storeSize}, any free data and admin ports.
     */
    static SeleneProcess manager(Path dir, String name, int port, int seed, String storeSize) throws IOException {
        return start(dir, name, "manager", "--layout", "small", "--bind", "127.0.0.1", "--port",
                Integer.toString(port), "--seeds", "127.0.0.1:" + seed, "--store-size", storeSize, "--replicas", "2",
                "--max-age", "off", "--admin-port", "0");
    }

    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    /** {@code n} free ports on loopback, lowest first. */
    static List<Integer> freePorts(int n) throws IOException {
        return LoopbackPorts.reserve(n).stream().sorted().toList();
    }

    String name() {
        return name;
    }

    Process process() {
        return process;
    }

    /** Every line the process wrote so far. */
    List<String> lines() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of("(log unreadable: " + e.getMessage() + ")");
        }
    }

    /** The last {@code n} lines, for a failure message. */
    String tail(int n) {
        List<String> l = lines();
        return name + " (" + log + "): ...\n" + String.join("\n", l.subList(Math.max(0, l.size() - n), l.size()));
    }

    /** Waits until the process answers {@code /ready} with 200; fails if it exits first. */
    SeleneProcess awaitReady(Duration timeout) throws Exception {
        awaitTrue(timeout, name + " ready", () -> {
            if (!process.isAlive()) {
                throw new AssertionError(name + " exited with " + process.exitValue() + ": " + tail(20));
            }
            if (adminPort == 0) {
                for (String l : lines()) {
                    Matcher m = ADMIN.matcher(l);
                    if (m.find()) {
                        adminPort = Integer.parseInt(m.group(1));
                    }
                }
                if (adminPort == 0) {
                    return false;
                }
            }
            try {
                return get("/ready").statusCode() == 200;
            } catch (IOException e) {
                return false;
            }
        });
        return this;
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The process's {@code /status}. */
    JsonNode status() throws IOException, InterruptedException {
        return JSON.readTree(get("/status").body());
    }

    /** How many members this manager's cluster lists (any status). */
    int members() throws IOException, InterruptedException {
        return status().at("/cluster/members").size();
    }

    /** Sends {@code signal} (STOP, CONT, KILL, TERM) to the process. */
    void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("could not send SIG" + signal + " to " + name);
        }
    }

    /** Waits for the process to exit; its exit code. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(name + " still running after " + timeout.toSeconds() + " s: " + tail(20));
        }
        return process.exitValue();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                signal("CONT"); // a stopped process does not act on SIGKILL's aftermath until resumed
            } catch (Exception e) {
                // it ended meanwhile
            }
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits until {@code check} holds, polling every 100 ms. */
    static void awaitTrue(Duration timeout, String what, Check check) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + timeout.toMillis() + " ms: " + what);
            }
            Thread.sleep(100);
        }
    }

    /** A condition that may throw while it is checked. */
    @FunctionalInterface
    interface Check {
        boolean holds() throws Exception;
    }

}

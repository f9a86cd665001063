package dev.selene.transport.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for tests, made once per JVM by the operator's script ({@code scripts/pool-certs.sh}, openssl): the
 * pool's CA with valid node certificates, an expired one, and a second CA with a node of its own (a member of another
 * pool). {@link #of(String)} gives a node's files; {@code rogue} trusts both CAs, so that its certificate is what a
 * server refuses, not the server's.
 */
public final class TestCertificates {

    /** Node names with valid certificates of the pool's CA. */
    public static final List<String> NODES = List.of("pool-manager-1", "pool-manager-2", "pool-manager-3",
            "host-a", "host-b", "host-c");
    private static Path dir;

    private TestCertificates() {
    }

    /** The directory, made on first use. */
    public static synchronized Path dir() {
        if (dir == null) {
            try {
                Path d = Files.createTempDirectory("selene-certs");
                List<String> names = new ArrayList<>(NODES);
                run(d.resolve("pool"), List.of(), names);
                run(d.resolve("pool"), List.of("--days", "-1"), List.of("expired"));
                run(d.resolve("other"), List.of(), List.of("rogue"));
                Files.writeString(d.resolve("both-cas.crt"), Files.readString(d.resolve("pool/ca.crt"))
                        + Files.readString(d.resolve("other/ca.crt")));
                dir = d;
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        return dir;
    }

    /** The files of {@code node}: one of {@link #NODES}, {@code expired}, or {@code rogue} (another CA). */
    public static PoolTls.Files of(String node) {
        Path d = dir();
        if (node.equals("rogue")) {
            return new PoolTls.Files(d.resolve("other/rogue.crt"), d.resolve("other/rogue.key"),
                    d.resolve("both-cas.crt"));
        }
        return new PoolTls.Files(d.resolve("pool/" + node + ".crt"), d.resolve("pool/" + node + ".key"),
                d.resolve("pool/ca.crt"));
    }

    /** The operator's script, found from the working directory up. */
    public static Path script() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path s = p.resolve("scripts/pool-certs.sh");
            if (Files.isExecutable(s)) {
                return s;
            }
        }
        throw new IllegalStateException("scripts/pool-certs.sh not found above " + Path.of("").toAbsolutePath());
    }

    /** Runs the script: {@code options}, then {@code dir} and {@code names}. */
    public static void run(Path dir, List<String> options, List<String> names) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(script().toString());
        cmd.addAll(options);
        cmd.add(dir.toString());
        cmd.addAll(names);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("pool-certs.sh failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

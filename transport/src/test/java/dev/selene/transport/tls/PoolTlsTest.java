package dev.selene.transport.tls;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node's certificate files: read at start with one line for each thing wrong, and read again when they change
 * (rotation without a restart), the last good ones kept while the new ones do not load.
 */
class PoolTlsTest {

    @TempDir
    Path dir;

    private PoolTls.Files copyOf(String node) throws Exception {
        PoolTls.Files from = TestCertificates.of(node);
        Path d = Files.createDirectories(dir.resolve(node + "-" + System.nanoTime()));
        PoolTls.Files to = new PoolTls.Files(d.resolve("node.crt"), d.resolve("node.key"), d.resolve("ca.crt"));
        Files.copy(from.certificate(), to.certificate());
        Files.copy(from.privateKey(), to.privateKey());
        Files.copy(from.ca(), to.ca());
        return to;
    }

    private static void replace(Path source, Path target) throws Exception {
        Path tmp = target.resolveSibling(target.getFileName() + ".new");
        Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void rewrittenFiles_areReadAgain_andAHalfRewrittenPair_keepsTheLastGoodOne() throws Exception {
        PoolTls.Files files = copyOf("host-a");
        PoolTls tls = PoolTls.of(files);
        assertEquals("host-a", tls.identity());

        // Only the key changes first (a rotation between its two renames): not a pair, the old files stay.
        replace(TestCertificates.of("host-b").privateKey(), files.privateKey());
        Thread.sleep(1_100);
        assertEquals("host-a", tls.identity());
        // Then the certificate: the new pair is in use.
        replace(TestCertificates.of("host-b").certificate(), files.certificate());
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!tls.identity().equals("host-b") && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertEquals("host-b", tls.identity());
        tls.serverContext(PoolTls.Engine.JDK);
    }

    @Test
    void filesThatDoNotLoad_areRefusedInOneLineNamingTheSetting() throws Exception {
        PoolTls.Files missing = new PoolTls.Files(dir.resolve("none.crt"), dir.resolve("none.key"),
                dir.resolve("ca.crt"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PoolTls.of(missing));
        assertTrue(e.getMessage().startsWith("selene.pool.tls.certificate = '"), e.getMessage());

        PoolTls.Files mismatched = copyOf("host-a");
        Files.copy(TestCertificates.of("host-c").privateKey(), mismatched.privateKey(),
                StandardCopyOption.REPLACE_EXISTING);
        e = assertThrows(IllegalArgumentException.class, () -> PoolTls.of(mismatched));
        assertTrue(e.getMessage().contains("is not the key of the certificate"), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"));

        PoolTls.Files notPem = copyOf("host-a");
        Files.writeString(notPem.privateKey(), "not a key");
        e = assertThrows(IllegalArgumentException.class, () -> PoolTls.of(notPem));
        assertTrue(e.getMessage().contains("PKCS#8"), e.getMessage());
    }
}

package dev.selene.node.config;

import dev.selene.actors.api.SettingsException;
import dev.selene.transport.disk.DirectoryLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.function.Executable;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a node's or a manager's settings name on this machine, checked before it starts: the disk directory (missing,
 * a file, not writable, in use), the admin address and port, a manager's store against the machine's memory and its
 * cluster and data ports; each problem one line naming the setting.
 */
class EnvironmentCheckTest {

    private static String error(Executable check) {
        SettingsException e = assertThrows(SettingsException.class, check);
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e.getMessage();
    }

    private static AdminSettings admin(String bind, int port) {
        return new AdminSettings(bind, port, "", 16_384, Duration.ofSeconds(2), Duration.ofMinutes(10));
    }

    @Test
    void aMissingDiskDirectory_isRefused_unlessCreateIsSet(@TempDir Path tmp) throws IOException {
        Path missing = tmp.resolve("a").resolve("b");
        assertEquals("selene.disk.dir = '" + missing + "' is invalid: no such directory; allowed: an existing "
                + "writable directory, or selene.disk.create = true (--create-disk-dir) to create it",
                error(() -> EnvironmentCheck.diskDirectory(missing.toString(), false)));
        assertFalse(Files.exists(missing));
        EnvironmentCheck.diskDirectory(missing.toString(), true);
        assertTrue(Files.isDirectory(missing));
        try (var left = Files.list(missing)) {
            assertEquals(List.of(DirectoryLock.LOCK_FILE_NAME), left.map(p -> p.getFileName().toString()).toList(),
                    "the lock file stays; no write probe is left behind");
        }
        EnvironmentCheck.diskDirectory(missing.toString(), false);
    }

    @Test
    void aDiskDirectoryThatIsAFile_orUnderAFile_isRefused(@TempDir Path tmp) throws IOException {
        Path file = Files.writeString(tmp.resolve("afile"), "x");
        assertEquals("selene.disk.dir = '" + file + "' is invalid: not a directory; allowed: a writable directory",
                error(() -> EnvironmentCheck.diskDirectory(file.toString(), true)));
        Path under = file.resolve("records");
        assertEquals("selene.disk.dir = '" + under + "' is invalid: cannot create it (Not a directory); allowed: "
                + "a writable directory", error(() -> EnvironmentCheck.diskDirectory(under.toString(), true)));
        assertEquals("x", Files.readString(file), "the file is left alone");
    }

    @Test
    void aDiskDirectoryThatTakesNoNewFile_isRefused_evenForRoot() {
        // procfs takes no new file whoever asks: the write probe, not only the permission bits, finds it
        String m = error(() -> EnvironmentCheck.diskDirectory("/proc/1", false));
        assertTrue(m.startsWith("selene.disk.dir = '/proc/1' is invalid: "), m);
        assertTrue(m.endsWith("; allowed: a writable directory"), m);
    }

    @Test
    void aDiskDirectoryHeldByAnotherNode_isRefused(@TempDir Path tmp) throws IOException {
        try (DirectoryLock held = DirectoryLock.acquire(tmp)) {
            assertEquals("selene.disk.dir = '" + tmp + "' is invalid: already used by another Selene node (pid "
                    + ProcessHandle.current().pid() + "); allowed: a directory no running node uses",
                    error(() -> EnvironmentCheck.diskDirectory(tmp.toString(), false)));
            assertTrue(held.isHeld(), "the check leaves the holder's lock alone");
        }
        assertDoesNotThrow(() -> EnvironmentCheck.diskDirectory(tmp.toString(), false));
    }

    @Test
    void anAdminAddressThatDoesNotResolve_orIsNotThisMachines_isRefused() {
        assertEquals("selene.admin.bind = 'no.such.host.invalid' is invalid: no such host; allowed: an IP address "
                + "or host name of this machine, e.g. 127.0.0.1",
                error(() -> EnvironmentCheck.admin(admin("no.such.host.invalid", 0))));
        String m = error(() -> EnvironmentCheck.admin(admin("192.0.2.1", 0)));
        assertTrue(m.startsWith("selene.admin.bind = '192.0.2.1' is invalid: it cannot be bound ("), m);
        assertDoesNotThrow(() -> EnvironmentCheck.admin(admin("127.0.0.1", 0)));
    }

    @Test
    void anAdminPortInUse_isRefusedNamingThePort() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            assertEquals("selene.admin.port = '" + port + "' is invalid: it cannot be bound on 127.0.0.1 (Address "
                    + "already in use); allowed: a free port, or 0 for any free port",
                    error(() -> EnvironmentCheck.admin(admin("127.0.0.1", port))));
        }
    }

    @Test
    void aPoolHostsAddressThatCannotBeBound_orItsPortInUse_isRefusedNamingTheSetting() throws IOException {
        NodeSettings foreign = SettingsLoader.load(null, Map.of("selene.pool.managers", List.of("127.0.0.1:7355"),
                "selene.pool.bind", "192.0.2.1", "selene.admin.port", "0"));
        String m = error(() -> EnvironmentCheck.check(foreign));
        assertTrue(m.startsWith("selene.pool.bind = '192.0.2.1' is invalid: it cannot be bound ("), m);
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            NodeSettings busy = SettingsLoader.load(null, Map.of("selene.pool.managers", List.of("127.0.0.1:7355"),
                    "selene.pool.bind", "127.0.0.1", "selene.pool.port", Integer.toString(port),
                    "selene.admin.port", "0"));
            assertTrue(error(() -> EnvironmentCheck.check(busy)).startsWith("selene.pool.port = '" + port
                    + "' is invalid: it cannot be bound on 127.0.0.1"));
        }
    }

    @Test
    void aRefusedAdminPort_leavesNoDiskDirectoryCreated(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("new").resolve("disk");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            NodeSettings s = SettingsLoader.load(null, Map.of("selene.disk.dir", dir.toString(), "selene.disk.create",
                    "true", "selene.disk.size", "64m", "selene.admin.port", Integer.toString(taken.getLocalPort())));
            assertTrue(error(() -> EnvironmentCheck.check(s)).startsWith("selene.admin.port = '"));
        }
        assertFalse(Files.exists(tmp.resolve("new")), "nothing created for a node that does not start");
    }

    @Test
    void aManagerAddressThatCannotBeBound_isRefusedNamingTheAddress_notThePort() {
        NodeSettings s = SettingsLoader.load(null, Map.of("selene.manager.bind", "192.0.2.1",
                "selene.manager.store-size", "8m", "selene.manager.port", "0", "selene.manager.admin-port", "0"));
        String m = error(() -> EnvironmentCheck.checkManager(s));
        assertTrue(m.startsWith("selene.manager.bind = '192.0.2.1' is invalid: it cannot be bound ("), m);
        NodeSettings v6 = SettingsLoader.load(null, Map.of("selene.manager.bind", "::1",
                "selene.manager.store-size", "8m", "selene.manager.port", "0", "selene.manager.admin-port", "0"));
        assertEquals("selene.manager.bind = '::1' is invalid: the pool's members name each other as host:port, which "
                + "cannot hold an IPv6 address; allowed: an IPv4 address or a host name",
                error(() -> EnvironmentCheck.checkManager(v6)));
    }

    @Test
    void aManagerStoreLargerThanThisMachinesMemory_isRefusedNamingTheSetting() {
        long total = MachineMemory.totalBytes();
        assumeTrue(total > 0, "this machine's memory is unknown");
        NodeSettings s = SettingsLoader.load(null, Map.of("selene.manager.store-size", Long.toString(total),
                "selene.manager.port", "0", "selene.manager.admin-port", "0"));
        String m = error(() -> EnvironmentCheck.checkManager(s));
        assertTrue(m.startsWith("selene.manager.store-size = '"), m);
        assertTrue(m.contains("this machine has " + (total >> 20) + " MiB"), m);
        assertTrue(m.endsWith("allowed: a store of at most " + ((total - MachineMemory.HEADROOM_BYTES) >> 20)
                + " MiB"), m);
        NodeSettings fits = SettingsLoader.load(null, Map.of("selene.manager.store-size", "1g",
                "selene.manager.port", "0", "selene.manager.admin-port", "0"));
        assertDoesNotThrow(() -> EnvironmentCheck.checkManager(fits));
    }

    @Test
    void aManagersClusterDataOrAdminPortInUse_isRefusedNamingThatPort() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            for (String setting : List.of("selene.manager.port", "selene.manager.data-port",
                    "selene.manager.admin-port")) {
                Map<String, Object> values = new HashMap<>(Map.of("selene.manager.store-size",
                        "1g", "selene.manager.port", "0", "selene.manager.admin-port", "0",
                        "selene.manager.data-port", "0"));
                values.put(setting, Integer.toString(port));
                NodeSettings s = SettingsLoader.load(null, values);
                assertEquals(setting + " = '" + port + "' is invalid: it cannot be bound on 127.0.0.1 (Address "
                        + "already in use); allowed: a free port, or 0 for any free port",
                        error(() -> EnvironmentCheck.checkManager(s)));
            }
        }
    }

    @Test
    void theDefaults_withADiskDirectory_pass(@TempDir Path tmp) {
        NodeSettings s = SettingsLoader.load(null, Map.of("selene.disk.dir", tmp.toString(),
                "selene.disk.size", "100g", "selene.admin.port", "0"));
        assertDoesNotThrow(() -> EnvironmentCheck.check(s));
    }
}

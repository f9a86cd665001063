package dev.selene.transport.disk;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DirectoryLockTest {

    @TempDir(factory = BuildDirectoryTempDirs.class)
    Path dir;

    @Test
    void secondLock_onSameDirectory_failsWithClearError() throws IOException {
        try (DirectoryLock first = DirectoryLock.acquire(dir)) {
            DirectoryInUseException e = assertThrows(DirectoryInUseException.class,
                    () -> DirectoryLock.acquire(dir.resolve(".")));
            assertEquals("directory " + dir.toRealPath() + " is already used by another Selene node in this process (pid "
                    + ProcessHandle.current().pid() + "); stop that node or give this one another directory",
                    e.getMessage());
            assertTrue(first.isHeld(), "a refused second lock leaves the first in force");
        }
    }

    @Test
    void lock_afterRelease_canBeTakenAgain() throws IOException {
        DirectoryLock first = DirectoryLock.acquire(dir);
        first.close();
        first.close();
        assertFalse(first.isHeld());
        try (DirectoryLock second = DirectoryLock.acquire(dir)) {
            assertTrue(second.isHeld());
        }
    }

    @Test
    void secondNode_inAnotherProcess_failsNamingItsPid_untilThatProcessDies() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process holder = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"),
                LockHolder.class.getName(), dir.toString())).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(),
                    StandardCharsets.UTF_8));
            String line = out.readLine();
            assertTrue(line != null && line.startsWith("locked "), "holder said: " + line);
            long pid = Long.parseLong(line.substring("locked ".length()));

            DirectoryInUseException e = assertThrows(DirectoryInUseException.class, () -> DirectoryLock.acquire(dir));
            assertEquals(pid, e.holderPid().orElseThrow());
            assertTrue(e.getMessage().contains("already used by another Selene node (pid " + pid + ")"),
                    e.getMessage());
            // the lock file deleted under the running holder (it looks like a leftover): still refused
            Files.delete(dir.resolve(DirectoryLock.LOCK_FILE_NAME));
            assertThrows(DirectoryInUseException.class, () -> DirectoryLock.acquire(dir));
        } finally {
            holder.destroyForcibly();
            holder.waitFor(10, TimeUnit.SECONDS);
        }
        try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
            assertTrue(lock.isHeld(), "the kernel dropped the dead holder's lock");
        }
    }
}

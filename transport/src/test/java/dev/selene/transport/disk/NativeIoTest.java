package dev.selene.transport.disk;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class NativeIoTest {

    @TempDir(factory = BuildDirectoryTempDirs.class)
    Path dir;

    @BeforeAll
    static void requireNativeIo() {
        assumeTrue(NativeIo.isAvailable(), () -> "native I/O is unavailable: " + NativeIo.unavailabilityCause());
    }

    @Test
    void openOfAMissingFile_failsWithEnoent_namingThePath() {
        Path missing = dir.resolve("missing.rec");
        NativeIoException e = assertThrows(NativeIoException.class, () -> NativeIo.openDirectForRead(missing));
        assertEquals(NativeIo.ENOENT, e.errno());
        assertEquals("open (O_DIRECT, read) of " + missing + " failed: ENOENT (no such file or directory)",
                e.getMessage());
    }

    @Test
    void unalignedDirectWrite_failsWithEinval_explainingAlignment() throws IOException {
        Path file = dir.resolve("unaligned");
        int fd = NativeIo.openDirectForWrite(file);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(4096, 4096);
            NativeIoException e = assertThrows(NativeIoException.class, () -> NativeIo.pwrite(fd, buffer, 100, file));
            assertEquals(NativeIo.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("4096-aligned"), e.getMessage());
        } finally {
            NativeIo.close(fd, file);
        }
    }

    @Test
    void vectoredDirectWrite_thenRead_roundTrips() throws IOException {
        Path file = dir.resolve("vectored");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(4096, 4096).fill((byte) 1);
            MemorySegment b = arena.allocate(8192, 4096).fill((byte) 2);
            int fd = NativeIo.openDirectForWrite(file);
            try {
                NativeIo.fallocate(fd, 4 * 4096, file);
                assertEquals(3 * 4096, NativeIo.pwritev(fd, List.of(a, b), 4096, file));
                NativeIo.fsync(fd, file);
            } finally {
                NativeIo.close(fd, file);
            }
            assertEquals(4 * 4096, Files.size(file));
            MemorySegment back = arena.allocate(3 * 4096, 4096);
            int rfd = NativeIo.openDirectForRead(file);
            try {
                assertEquals(3 * 4096, NativeIo.preadv(rfd, List.of(back.asSlice(0, 4096), back.asSlice(4096)),
                        4096, file));
                assertEquals(0, NativeIo.pread(rfd, arena.allocate(4096, 4096), 4 * 4096, file));
            } finally {
                NativeIo.close(rfd, file);
            }
            assertEquals(-1, back.asSlice(0, 4096).mismatch(a));
            assertEquals(-1, back.asSlice(4096).mismatch(b));
        }
        NativeIo.fsyncDirectory(dir);
    }

    @Test
    void heapMemory_isRejectedBeforeTheCall() {
        assertThrows(IllegalArgumentException.class, () -> NativeIo.pwritev(0,
                List.of(MemorySegment.ofArray(new byte[4096])), 0, dir.resolve("x")));
    }
}

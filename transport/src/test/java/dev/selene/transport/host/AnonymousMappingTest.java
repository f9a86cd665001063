package dev.selene.transport.host;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@EnabledOnOs(OS.LINUX)
class AnonymousMappingTest {

    private static final long PAGE = 4096;
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MINCORE = downcall("mincore", FunctionDescriptor.of(JAVA_INT, ADDRESS,
            JAVA_LONG, ADDRESS));
    private static final MethodHandle MMAP = downcall("mmap", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG,
            JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = downcall("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS,
            JAVA_LONG));

    @Test
    void map_returnsZeroedMemoryWithEveryPageAlreadyPresent() throws Throwable {
        long bytes = 64L << 20;
        try (Arena arena = Arena.ofConfined(); Arena scratch = Arena.ofConfined()) {
            MemorySegment mapped = AnonymousMapping.map(arena, bytes, PAGE);
            MemorySegment resident = scratch.allocate(bytes / PAGE);

            assertEquals(0, (int) MINCORE.invokeExact(mapped, bytes, resident));
            long absent = 0;
            for (long page = 0; page < bytes / PAGE; page++) {
                absent += (resident.get(ValueLayout.JAVA_BYTE, page) & 1) == 0 ? 1 : 0;
            }
            assertEquals(0, absent, "pages not yet faulted in when the mapping was handed out");
            assertEquals(-1, mapped.mismatch(scratch.allocate(bytes)), "the mapping is all zeros");
        }
    }

    @Test
    void map_letsOtherThreadsOfTheProcessMapMemoryWhileItFaultsPagesIn() throws Exception {
        long bytes = 1L << 30;
        AtomicBoolean stop = new AtomicBoolean();
        long[] done = new long[1 << 22];
        int[] count = new int[1];
        Thread other = Thread.ofPlatform().start(() -> {
            while (!stop.get() && count[0] < done.length) {
                mapAndUnmapOnePage(); // needs the process's memory-map lock for writing
                done[count[0]++] = System.nanoTime();
            }
        });
        long mapStart;
        long mapEnd;
        try (Arena arena = Arena.ofConfined()) {
            Thread.sleep(50);
            mapStart = System.nanoTime();
            AnonymousMapping.map(arena, bytes, PAGE);
            mapEnd = System.nanoTime();
        } finally {
            stop.set(true);
            other.join();
        }
        long longestWait = 0;
        long previous = mapStart;
        for (int i = 0; i < count[0] && previous < mapEnd; i++) {
            if (done[i] > mapStart) {
                longestWait = Math.max(longestWait, Math.min(done[i], mapEnd) - previous);
                previous = done[i];
            }
        }
        // Faulted in 16 MiB at a time, the other thread gets the lock between steps (64 of them here); with the
        // whole gigabyte faulted in by one call it waits for nearly all of it.
        assertTrue(longestWait < (mapEnd - mapStart) / 2, "the other thread waited " + longestWait / 1_000_000
                + " ms at once while 1 GiB was faulted in in " + (mapEnd - mapStart) / 1_000_000 + " ms");
    }

    private static void mapAndUnmapOnePage() {
        try {
            MemorySegment at = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, PAGE, 0x1 | 0x2, 0x02 | 0x20,
                    -1, 0L);
            int ignored = (int) MUNMAP.invokeExact(at, PAGE);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private static MethodHandle downcall(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor);
    }
}

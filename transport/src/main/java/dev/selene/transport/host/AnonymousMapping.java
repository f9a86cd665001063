package dev.selene.transport.host;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Large zeroed memory for slots, mapped from the kernel rather than allocated and cleared: on Linux an anonymous
 * private {@code mmap} with every page faulted in at once ({@code MAP_POPULATE}), so that the kernel supplies the
 * pages zeroed in one pass (here about two to three times faster than allocating and writing zeros over 2 GiB) and
 * no transfer into a slot later stops on a page fault (faulting the pages in on first touch instead cost the data
 * plane's threads seconds per gigabyte landed). Elsewhere, or when the call is not available, the arena allocates
 * and clears the memory as usual. The mapping is unmapped when its arena closes.
 */
final class AnonymousMapping {

    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS_POPULATE = 0x02 | 0x20 | 0x8000;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;

    static {
        MethodHandle mmap = null;
        MethodHandle munmap = null;
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (os.startsWith("linux") && (arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"))) {
            try {
                Linker linker = Linker.nativeLinker();
                var libc = linker.defaultLookup();
                mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ADDRESS,
                        ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
                munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(), FunctionDescriptor.of(JAVA_INT,
                        ADDRESS, JAVA_LONG));
            } catch (RuntimeException | LinkageError e) {
                mmap = null;
                munmap = null;
            }
        }
        MMAP = mmap;
        MUNMAP = munmap;
    }

    private AnonymousMapping() {
    }

    /**
     * {@code bytes} zeroed bytes aligned to {@code alignment} (at most the page size where mapped), alive as long as
     * {@code arena}.
     *
     * @throws OutOfMemoryError when the memory cannot be had
     */
    static MemorySegment map(Arena arena, long bytes, long alignment) {
        if (MMAP == null || alignment > 4096) {
            return arena.allocate(bytes, alignment);
        }
        MemorySegment at;
        try {
            at = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS_POPULATE,
                    -1, 0L);
        } catch (Throwable e) {
            return arena.allocate(bytes, alignment);
        }
        if (at.address() == -1L || at.address() == 0L) {
            throw new OutOfMemoryError("the kernel refused to map " + bytes + " bytes");
        }
        long address = at.address();
        return at.reinterpret(bytes, arena, unused -> unmap(address, bytes));
    }

    private static void unmap(long address, long bytes) {
        try {
            int ignored = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), bytes);
        } catch (Throwable e) {
            throw new IllegalStateException("munmap failed", e);
        }
    }
}

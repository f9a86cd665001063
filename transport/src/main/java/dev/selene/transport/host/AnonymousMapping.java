package dev.selene.transport.host;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Large zeroed memory for slots, mapped from the kernel rather than allocated and cleared: on Linux an anonymous
 * private {@code mmap} whose pages are all faulted in before it is handed out, so that the kernel supplies them zeroed
 * in one pass (here about two to three times faster than allocating and writing zeros over 2 GiB) and no transfer
 * into a slot later stops on a page fault (faulting the pages in on first touch instead cost the data plane's threads
 * seconds per gigabyte landed).
 *
 * <p>The pages are faulted in {@value #POPULATE_CHUNK_MIB} MiB at a time ({@code madvise(MADV_POPULATE_WRITE)}, or a
 * write to each page where the kernel predates it), not with {@code MAP_POPULATE} in the {@code mmap} call itself:
 * that holds the process's memory-map lock for the whole population, and every other thread that maps memory (a
 * thread's stack, the garbage collector, {@code malloc}) waits behind it, then every thread that takes a page fault.
 * Measured here: 4 GiB with {@code MAP_POPULATE} took 4–12 s, and another thread of the process that mapped memory
 * waited all of it (on a freshly booted machine a pool manager missed its cluster heartbeats for 12.5 s and was
 * removed from the cluster); in 16 MiB steps the same 4 GiB took as long and the other thread waited at most
 * 0.1–0.2 s at a time.
 *
 * <p>Elsewhere, or when the calls are not available, the arena allocates and clears the memory as usual. The mapping
 * is unmapped when its arena closes.
 */
final class AnonymousMapping {

    /** How much is faulted in per call; the longest another thread of the process waits to map memory. */
    static final int POPULATE_CHUNK_MIB = 16;
    private static final long POPULATE_CHUNK = (long) POPULATE_CHUNK_MIB << 20;
    private static final long PAGE = 4096;
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_POPULATE_WRITE = 23;
    private static final int EINVAL = 22;
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MADVISE;

    static {
        MethodHandle mmap = null;
        MethodHandle munmap = null;
        MethodHandle madvise = null;
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
                madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(), FunctionDescriptor.of(JAVA_INT,
                        ADDRESS, JAVA_LONG, JAVA_INT), Linker.Option.captureCallState("errno"));
            } catch (RuntimeException | LinkageError e) {
                mmap = null;
                munmap = null;
                madvise = null;
            }
        }
        MMAP = mmap;
        MUNMAP = munmap;
        MADVISE = madvise;
    }

    private AnonymousMapping() {
    }

    /**
     * {@code bytes} zeroed bytes aligned to {@code alignment} (at most the page size where mapped), every page
     * present, alive as long as {@code arena}.
     *
     * @throws OutOfMemoryError when the memory cannot be had
     */
    static MemorySegment map(Arena arena, long bytes, long alignment) {
        if (MMAP == null || alignment > PAGE) {
            return arena.allocate(bytes, alignment);
        }
        MemorySegment at;
        try {
            at = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS,
                    -1, 0L);
        } catch (Throwable e) {
            return arena.allocate(bytes, alignment);
        }
        if (at.address() == -1L || at.address() == 0L) {
            throw new OutOfMemoryError("the kernel refused to map " + bytes + " bytes");
        }
        long address = at.address();
        MemorySegment mapped = at.reinterpret(bytes);
        try {
            populate(mapped);
        } catch (OutOfMemoryError e) {
            unmap(address, bytes);
            throw e;
        }
        return at.reinterpret(bytes, arena, unused -> unmap(address, bytes));
    }

    /** Faults in every page of {@code mapped}, one chunk per call so that no call holds the map lock for long. */
    private static void populate(MemorySegment mapped) {
        boolean madvise = true;
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment state = scratch.allocate(CALL_STATE);
            for (long offset = 0; offset < mapped.byteSize(); offset += POPULATE_CHUNK) {
                long length = Math.min(POPULATE_CHUNK, mapped.byteSize() - offset);
                MemorySegment chunk = mapped.asSlice(offset, length);
                if (madvise) {
                    int errno = madvise(state, chunk, length);
                    if (errno == 0) {
                        continue;
                    }
                    if (errno != EINVAL) {
                        throw new OutOfMemoryError("the kernel could not supply " + mapped.byteSize()
                                + " bytes of memory (madvise errno " + errno + ")");
                    }
                    madvise = false; // a kernel older than 5.14: touch each page instead
                }
                for (long page = 0; page < length; page += PAGE) {
                    chunk.set(ValueLayout.JAVA_BYTE, page, (byte) 0);
                }
            }
        }
    }

    private static int madvise(MemorySegment state, MemorySegment chunk, long length) {
        try {
            int rc = (int) MADVISE.invokeExact(state, chunk, length, MADV_POPULATE_WRITE);
            return rc == 0 ? 0 : (int) ERRNO.get(state, 0L);
        } catch (Throwable e) {
            return EINVAL;
        }
    }

    private static void unmap(long address, long bytes) {
        try {
            int ignored = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), bytes);
        } catch (Throwable e) {
            throw new IllegalStateException("munmap failed", e);
        }
    }
}

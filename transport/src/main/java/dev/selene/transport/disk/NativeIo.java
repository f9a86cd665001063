package dev.selene.transport.disk;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The C library calls the disk tier needs and {@code FileChannel} does not offer (a file descriptor opened with
 * O_DIRECT, fallocate, vectored positional I/O), made through the FFM linker; each failure is a
 * {@link NativeIoException} carrying errno.
 *
 * <p>Optional native code in Netty's manner: {@link #isAvailable()} says whether the calls linked (Linux on x86-64 or
 * aarch64) and {@link #unavailabilityCause()} why not. Memory passed to these calls must be native; with O_DIRECT it
 * must also be 4096-aligned, as must offsets and lengths, or the kernel answers EINVAL.
 */
public final class NativeIo {

    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EOPNOTSUPP = 95;

    /** Most buffers one vectored call takes (Linux's IOV_MAX). */
    public static final int IOV_MAX_BUFFERS = 1024;

    private static final int O_RDONLY = 0;
    /** What {@link #lockDirectory} answers when another holds the lock. */
    public static final int LOCKED_ELSEWHERE = -1;
    private static final int LOCK_EX = 2;
    private static final int LOCK_NB = 4;
    /** The errno of a lock another holds (EAGAIN, the same number on Linux). */
    private static final int EWOULDBLOCK = 11;
    private static final int O_WRONLY = 1;
    private static final int O_CREAT = 0x40;
    private static final int O_TRUNC = 0x200;
    private static final int O_CLOEXEC = 0x8_0000;
    private static final int FILE_MODE = 0644;
    private static final long IOVEC_BYTES = 16;

    private static final Linked LINKED;
    private static final Throwable UNAVAILABILITY_CAUSE;

    static {
        Linked linked = null;
        Throwable cause = null;
        try {
            linked = Linked.link();
        } catch (Throwable t) {
            cause = t;
        }
        LINKED = linked;
        UNAVAILABILITY_CAUSE = cause;
    }

    private NativeIo() {
    }

    /** Whether the native calls linked on this platform. */
    public static boolean isAvailable() {
        return LINKED != null;
    }

    /** Why the native calls are unavailable; null when they are available. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** Opens (creating or truncating) {@code file} for O_DIRECT writes; returns the file descriptor. */
    public static int openDirectForWrite(Path file) throws NativeIoException {
        Linked l = linked();
        return open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | l.oDirect, "open (O_DIRECT, write) of");
    }

    /** Opens {@code file} for O_DIRECT reads; returns the file descriptor. */
    public static int openDirectForRead(Path file) throws NativeIoException {
        Linked l = linked();
        return open(file, O_RDONLY | O_CLOEXEC | l.oDirect, "open (O_DIRECT, read) of");
    }

    /** Allocates {@code length} bytes from offset 0 (mode 0); EOPNOTSUPP where the filesystem cannot. */
    public static void fallocate(int fd, long length, Path file) throws NativeIoException {
        Linked l = linked();
        call("fallocate of " + length + " bytes for", file,
                (arena, capture) -> (int) l.fallocate.invokeExact(capture, fd, 0, 0L, length));
    }

    /** Sets the file's length to {@code length} (sparse where it grows). */
    public static void ftruncate(int fd, long length, Path file) throws NativeIoException {
        Linked l = linked();
        call("ftruncate to " + length + " bytes of", file,
                (arena, capture) -> (int) l.ftruncate.invokeExact(capture, fd, length));
    }

    /** Writes {@code buffer} at {@code offset}; returns the bytes written (possibly fewer). */
    public static long pwrite(int fd, MemorySegment buffer, long offset, Path file) throws NativeIoException {
        Linked l = linked();
        requireNative(buffer);
        return call("pwrite of " + buffer.byteSize() + " bytes at offset " + offset + " to", file,
                (arena, capture) -> (long) l.pwrite.invokeExact(capture, fd, buffer, buffer.byteSize(), offset));
    }

    /** Reads into {@code buffer} from {@code offset}; returns the bytes read, 0 at end of file. */
    public static long pread(int fd, MemorySegment buffer, long offset, Path file) throws NativeIoException {
        Linked l = linked();
        requireNative(buffer);
        return call("pread of " + buffer.byteSize() + " bytes at offset " + offset + " from", file,
                (arena, capture) -> (long) l.pread.invokeExact(capture, fd, buffer, buffer.byteSize(), offset));
    }

    /** Writes {@code buffers} back to back from {@code offset} in one call; returns the bytes written. */
    public static long pwritev(int fd, List<MemorySegment> buffers, long offset, Path file) throws NativeIoException {
        Linked l = linked();
        int count = requireVector(buffers);
        return call("pwritev of " + totalBytes(buffers) + " bytes in " + count + " buffers at offset " + offset
                + " to", file, (arena, capture) -> (long) l.pwritev.invokeExact(capture, fd,
                iovec(arena, buffers), count, offset));
    }

    /** Reads into {@code buffers} back to back from {@code offset} in one call; returns the bytes read. */
    public static long preadv(int fd, List<MemorySegment> buffers, long offset, Path file) throws NativeIoException {
        Linked l = linked();
        int count = requireVector(buffers);
        return call("preadv of " + totalBytes(buffers) + " bytes in " + count + " buffers at offset " + offset
                + " from", file, (arena, capture) -> (long) l.preadv.invokeExact(capture, fd,
                iovec(arena, buffers), count, offset));
    }

    /** Flushes the file's data and metadata to the device. */
    public static void fsync(int fd, Path file) throws NativeIoException {
        Linked l = linked();
        call("fsync of", file, (arena, capture) -> (int) l.fsync.invokeExact(capture, fd));
    }

    /** Closes the file descriptor; it is released even when this reports an error. */
    public static void close(int fd, Path file) throws NativeIoException {
        Linked l = linked();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = arena.allocate(l.captureLayout);
            int result = (int) l.close.invokeExact(capture, fd);
            if (result < 0) {
                int errno = l.errno(capture);
                if (errno != EINTR) {
                    throw new NativeIoException("close of", file, errno);
                }
            }
        } catch (NativeIoException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("native close failed", t);
        }
    }

    /** Flushes a directory's entries (a rename or delete in it) to the device. */
    public static void fsyncDirectory(Path dir) throws NativeIoException {
        Linked l = linked();
        int fd = open(dir, O_RDONLY | O_CLOEXEC | l.oDirectory, "open (directory) of");
        try {
            call("fsync of directory", dir, (arena, capture) -> (int) l.fsync.invokeExact(capture, fd));
        } finally {
            close(fd, dir);
        }
    }

    /**
     * Opens {@code dir} and takes an exclusive {@code flock} on it, without waiting: the descriptor, which holds the
     * lock until it is closed (or the process dies), or {@link #LOCKED_ELSEWHERE} when another descriptor holds it
     * (in any process). A lock on the directory itself cannot be taken away by deleting a file in it. A file system
     * that cannot take it throws.
     */
    public static int lockDirectory(Path dir) throws NativeIoException {
        Linked l = linked();
        int fd = open(dir, O_RDONLY | O_CLOEXEC | l.oDirectory, "open (directory) of");
        try {
            call("flock of directory", dir, (arena, capture) -> (int) l.flock.invokeExact(capture, fd,
                    LOCK_EX | LOCK_NB));
            return fd;
        } catch (NativeIoException e) {
            close(fd, dir);
            if (e.errno() == EWOULDBLOCK) {
                return LOCKED_ELSEWHERE;
            }
            throw e;
        }
    }

    private static int open(Path file, int flags, String operation) throws NativeIoException {
        Linked l = linked();
        String path = file.toString();
        return (int) call(operation, file,
                (arena, capture) -> (int) l.open.invokeExact(capture, arena.allocateFrom(path), flags, FILE_MODE));
    }

    @FunctionalInterface
    private interface Call {
        long invoke(Arena arena, MemorySegment capture) throws Throwable;
    }

    private static long call(String operation, Path file, Call call) throws NativeIoException {
        Linked l = linked();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = arena.allocate(l.captureLayout);
            while (true) {
                long result;
                try {
                    result = call.invoke(arena, capture);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable t) {
                    throw new IllegalStateException("native call failed: " + operation + " " + file, t);
                }
                if (result >= 0) {
                    return result;
                }
                int errno = l.errno(capture);
                if (errno != EINTR) {
                    throw new NativeIoException(operation, file, errno);
                }
            }
        }
    }

    private static MemorySegment iovec(Arena arena, List<MemorySegment> buffers) {
        MemorySegment iov = arena.allocate(IOVEC_BYTES * buffers.size(), Long.BYTES);
        for (int i = 0; i < buffers.size(); i++) {
            MemorySegment buffer = buffers.get(i);
            iov.set(JAVA_LONG, IOVEC_BYTES * i, buffer.address());
            iov.set(JAVA_LONG, IOVEC_BYTES * i + Long.BYTES, buffer.byteSize());
        }
        return iov;
    }

    private static int requireVector(List<MemorySegment> buffers) {
        if (buffers.isEmpty() || buffers.size() > IOV_MAX_BUFFERS) {
            throw new IllegalArgumentException(buffers.size() + " buffers in one vectored call; allowed: 1.."
                    + IOV_MAX_BUFFERS);
        }
        for (MemorySegment buffer : buffers) {
            requireNative(buffer);
        }
        return buffers.size();
    }

    private static void requireNative(MemorySegment buffer) {
        if (!buffer.isNative()) {
            throw new IllegalArgumentException("native I/O needs off-heap memory; got a heap segment");
        }
    }

    private static long totalBytes(List<MemorySegment> buffers) {
        long total = 0;
        for (MemorySegment buffer : buffers) {
            total += buffer.byteSize();
        }
        return total;
    }

    private static Linked linked() {
        if (LINKED == null) {
            throw new UnsupportedOperationException("native disk I/O is unavailable: " + UNAVAILABILITY_CAUSE,
                    UNAVAILABILITY_CAUSE);
        }
        return LINKED;
    }

    /** The linked calls and the platform's flag values. */
    private static final class Linked {
        final StructLayout captureLayout;
        final VarHandle errnoHandle;
        final int oDirect;
        final int oDirectory;
        final MethodHandle open;
        final MethodHandle close;
        final MethodHandle fallocate;
        final MethodHandle ftruncate;
        final MethodHandle pwrite;
        final MethodHandle pread;
        final MethodHandle pwritev;
        final MethodHandle preadv;
        final MethodHandle fsync;
        final MethodHandle flock;

        private Linked(int oDirect, int oDirectory) {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            Linker.Option errno = Linker.Option.captureCallState("errno");
            this.captureLayout = Linker.Option.captureStateLayout();
            this.errnoHandle = captureLayout.varHandle(MemoryLayout.PathElement.groupElement("errno"));
            this.oDirect = oDirect;
            this.oDirectory = oDirectory;
            this.open = linker.downcallHandle(find(libc, "open"), FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
                    JAVA_INT), errno, Linker.Option.firstVariadicArg(2));
            this.close = handle(linker, libc, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), errno);
            this.fallocate = handle(linker, libc, "fallocate",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), errno);
            this.ftruncate = handle(linker, libc, "ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG),
                    errno);
            FunctionDescriptor positional = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG);
            this.pwrite = handle(linker, libc, "pwrite", positional, errno);
            this.pread = handle(linker, libc, "pread", positional, errno);
            FunctionDescriptor vectored = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG);
            this.pwritev = handle(linker, libc, "pwritev", vectored, errno);
            this.preadv = handle(linker, libc, "preadv", vectored, errno);
            this.fsync = handle(linker, libc, "fsync", FunctionDescriptor.of(JAVA_INT, JAVA_INT), errno);
            this.flock = handle(linker, libc, "flock", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), errno);
        }

        static Linked link() {
            String os = System.getProperty("os.name", "");
            String arch = System.getProperty("os.arch", "");
            if (!os.toLowerCase(Locale.ROOT).startsWith("linux")) {
                throw new UnsupportedOperationException("O_DIRECT record files need Linux; this is " + os);
            }
            return switch (arch) {
                case "amd64", "x86_64" -> new Linked(0x4000, 0x1_0000);
                case "aarch64" -> new Linked(0x1_0000, 0x4000);
                default -> throw new UnsupportedOperationException(
                        "O_DIRECT record files need x86-64 or aarch64; this is " + arch);
            };
        }

        int errno(MemorySegment capture) {
            return (int) errnoHandle.get(capture, 0L);
        }

        private static MethodHandle handle(Linker linker, SymbolLookup libc, String name, FunctionDescriptor fd,
                                           Linker.Option errno) {
            return linker.downcallHandle(find(libc, name), fd, errno);
        }

        private static MemorySegment find(SymbolLookup libc, String name) {
            return libc.find(name).orElseThrow(() -> new UnsupportedOperationException(
                    "the C library has no '" + name + "'"));
        }
    }
}

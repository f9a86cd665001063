package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordChecksums;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFooter;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static dev.selene.engine.codec.RecordFileFormat.BLOCK_BYTES;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;

/**
 * Record files on a local disk with O_DIRECT: bytes go straight between host slots and the device, several
 * transfers of one record in flight, and many records written at once from different threads.
 *
 * <pre>
 * Commit protocol (record files)
 *   1  create "&lt;name&gt;.rec.tmp" (O_DIRECT, truncating a leftover)
 *   2  fallocate it to its final length, so every later write is an overwrite; EOPNOTSUPP falls back to
 *      ftruncate (sparse); any other failure removes the temporary and throws
 *   3  header and body as vectored writes of up to runBytes of adjacent shares, taken by up to
 *      transfersPerRecord threads (the caller and helpers on the executor); the caller checksums the
 *      shares meanwhile. A partly used last row piece is written through a zeroed bounce block
 *   4  footer, last: until it is written the file does not validate
 *   5  fsync, close, rename over "&lt;name&gt;.rec", fsync the directory (one fsync shared by the writers that
 *      renamed into it meanwhile: a group commit, see {@link DirectorySyncs})
 * A failure at any step removes the temporary (and, after the rename, the file); nothing half-written is ever
 * visible under a record's name. Reads check header, layout, length and footer, then read the body with the same
 * fan-out and verify every checksum before returning.
 * </pre>
 *
 * <p>The caller's thread always takes part in its own transfers and waits only for transfers already started,
 * so a saturated or shut-down executor slows a write down but never deadlocks it.
 */
public final class DirectRecordIo implements RecordIo {

    /** Threads (caller included) that may move one record's bytes at once, by default. */
    public static final int DEFAULT_TRANSFERS_PER_RECORD = 4;
    /** Most bytes of one vectored read or write, by default. */
    public static final int DEFAULT_RUN_BYTES = 1 << 20;

    private final FileOps ops;
    private final Executor executor;
    private final int transfersPerRecord;
    private final int runBytes;
    private final Set<Path> writing = ConcurrentHashMap.newKeySet();
    private final DirectorySyncs directorySyncs;

    private DirectRecordIo(FileOps ops, Executor executor, int transfersPerRecord, int runBytes) {
        if (transfersPerRecord < 1 || transfersPerRecord > 64) {
            throw new IllegalArgumentException("transfersPerRecord = " + transfersPerRecord
                    + " is invalid; allowed: 1..64");
        }
        if (runBytes < BLOCK_BYTES || runBytes % BLOCK_BYTES != 0 || runBytes > (64 << 20)) {
            throw new IllegalArgumentException("runBytes = " + runBytes
                    + " is invalid; allowed: a multiple of 4096 up to 64 MiB");
        }
        this.ops = Objects.requireNonNull(ops, "ops");
        this.directorySyncs = new DirectorySyncs(ops);
        this.executor = executor;
        this.transfersPerRecord = executor == null ? 1 : transfersPerRecord;
        this.runBytes = runBytes;
    }

    /**
     * Record I/O whose transfers fan out to up to {@code transfersPerRecord} threads: the caller and helpers run on
     * {@code transferExecutor} (a small pool dedicated to disk I/O).
     *
     * @throws UnsupportedOperationException when {@link NativeIo} is unavailable here, naming why
     */
    public static DirectRecordIo create(Executor transferExecutor, int transfersPerRecord) {
        requireNativeIo();
        return new DirectRecordIo(NativeFileOps.INSTANCE, Objects.requireNonNull(transferExecutor,
                "transferExecutor"), transfersPerRecord, DEFAULT_RUN_BYTES);
    }

    /** Record I/O that moves every record's bytes on the calling thread only. */
    public static DirectRecordIo sequential() {
        requireNativeIo();
        return new DirectRecordIo(NativeFileOps.INSTANCE, null, 1, DEFAULT_RUN_BYTES);
    }

    /** Record I/O over other file system calls: the seam for fault injection in tests. */
    static DirectRecordIo withFileOps(FileOps ops, Executor executor, int transfersPerRecord, int runBytes) {
        return new DirectRecordIo(ops, executor, transfersPerRecord, runBytes);
    }

    @Override
    public WriteResult write(RecordSpec spec, Layout layout, ShareMemory source, Path dir) throws IOException {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(source, "source");
        Path target = RecordFileNames.recordFile(dir, spec.key()).toAbsolutePath().normalize();
        if (!writing.add(target)) {
            throw new IllegalStateException("a write of " + target + " is already in progress");
        }
        try {
            // The header block is written by helper threads, so its arena cannot be confined; an automatic one is
            // freed by the collector, where closing a shared arena per record would be a handshake with every
            // thread of the JVM (the copy threads' included) for two 4 KiB blocks.
            Arena arena = Arena.ofAuto();
            RecordHeader header = RecordHeader.current(spec, layout);
            MemorySegment headerBlock = arena.allocate(HEADER_BYTES, BLOCK_BYTES);
            header.encodeTo(headerBlock);
            List<Extent> extents = writeExtents(header, headerBlock, source, arena);
            return commit(header, headerBlock, source, runs(extents), target, arena);
        } finally {
            writing.remove(target);
        }
    }

    private WriteResult commit(RecordHeader header, MemorySegment headerBlock, ShareMemory source, List<Run> runs,
                               Path target, Arena arena) throws IOException {
        Path temporary = RecordFileNames.temporaryFile(target);
        OpenFile file = ops.create(temporary);
        boolean open = true;
        boolean renamed = false;
        try {
            preallocate(file, header.fileLength());
            RecordChecksums sums = RecordChecksums.forFile(header, headerBlock);
            transfer(file, runs, true, () -> sums.updateAll(source));
            MemorySegment footerBlock = arena.allocate(header.footerBytes(), BLOCK_BYTES);
            RecordFooter.of(header, headerBlock, sums).encodeTo(footerBlock, header);
            transferFully(file, List.of(footerBlock), header.footerOffset(), true);
            ops.sync(file);
            open = false;
            ops.close(file);
            ops.rename(temporary, target);
            renamed = true;
            directorySyncs.sync(target.getParent());
            return new WriteResult(target, header.fileLength());
        } catch (Exception e) {
            deleteQuietly(renamed ? target : temporary, e);
            throw e;
        } finally {
            if (open) {
                closeQuietly(file, null);
            }
        }
    }

    private void preallocate(OpenFile file, long length) throws IOException {
        try {
            ops.preallocate(file, length);
        } catch (NativeIoException e) {
            if (e.errno() != NativeIo.EOPNOTSUPP) {
                throw e;
            }
            ops.setLength(file, length);
        }
    }

    @Override
    public RecordHeader read(Path file, Layout layout, ShareMemory target) throws IOException {
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(target, "target");
        try (Arena arena = Arena.ofConfined()) { // header and footer blocks, read on this thread only
            OpenFile open = ops.openForRead(file);
            try {
                Checked checked = openChecked(open, layout, arena);
                RecordHeader header = checked.header();
                transfer(open, runs(readExtents(header, target)), false, null);
                RecordChecksums sums = RecordChecksums.forFile(header, checked.headerBlock());
                sums.updateAll(target);
                checked.footer().verify(sums);
                return header;
            } finally {
                closeQuietly(open, null);
            }
        } catch (RecordFormatException e) {
            throw e.withSource(file.toString());
        }
    }

    @Override
    public RecordHeader readHeader(Path file) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            OpenFile open = ops.openForRead(file);
            try {
                return openChecked(open, null, arena).header();
            } finally {
                closeQuietly(open, null);
            }
        } catch (RecordFormatException e) {
            throw e.withSource(file.toString());
        }
    }

    @Override
    public RecordHeader verify(Path file, Layout layout) throws IOException {
        Objects.requireNonNull(layout, "layout");
        try (Arena arena = Arena.ofConfined()) {
            OpenFile open = ops.openForRead(file);
            try {
                Checked checked = openChecked(open, layout, arena);
                RecordHeader header = checked.header();
                RecordChecksums sums = RecordChecksums.forFile(header, checked.headerBlock());
                MemorySegment piece = arena.allocate(layout.slotBytes(), BLOCK_BYTES);
                for (int p = 0; p < header.pieceCount(); p++) {
                    transferFully(open, List.of(piece), RecordFileFormat.shareOffset(layout, p, 0), false);
                    for (int rank = 0; rank < layout.ranks(); rank++) {
                        sums.update(p, rank, piece.asSlice((long) rank * layout.pageBytes(), layout.pageBytes()));
                    }
                }
                checked.footer().verify(sums);
                return header;
            } finally {
                closeQuietly(open, null);
            }
        } catch (RecordFormatException e) {
            throw e.withSource(file.toString());
        }
    }

    @Override
    public boolean delete(Path file) throws IOException {
        boolean existed = ops.delete(file);
        if (existed) {
            directorySyncs.sync(file.toAbsolutePath().getParent());
        }
        return existed;
    }

    /** A file whose header, layout, length and footer passed. */
    private record Checked(RecordHeader header, MemorySegment headerBlock, RecordFooter footer) {
    }

    private Checked openChecked(OpenFile file, Layout layout, Arena arena) throws IOException {
        long size = ops.size(file.path());
        MemorySegment headerBlock = arena.allocate(HEADER_BYTES, BLOCK_BYTES);
        long got = readUpTo(file, headerBlock);
        RecordHeader header = RecordHeader.decode(headerBlock.asSlice(0, got));
        if (layout != null) {
            header.requireLayout(layout);
        }
        header.requireFileLength(size);
        MemorySegment footerBlock = arena.allocate(header.footerBytes(), BLOCK_BYTES);
        transferFully(file, List.of(footerBlock), header.footerOffset(), false);
        return new Checked(header, headerBlock, RecordFooter.decode(header, headerBlock, footerBlock));
    }

    private long readUpTo(OpenFile file, MemorySegment block) throws IOException {
        long got = 0;
        while (got < block.byteSize()) {
            long n = ops.read(file, List.of(block.asSlice(got)), got);
            if (n <= 0) {
                break;
            }
            got += n;
        }
        return got;
    }

    /** A contiguous range of the file and the memory it moves from or to. */
    private record Extent(long offset, MemorySegment buffer) {
    }

    /** Adjacent extents moved by one vectored call. */
    private record Run(long offset, List<MemorySegment> buffers) {
    }

    private static List<Extent> writeExtents(RecordHeader header, MemorySegment headerBlock, ShareMemory source,
                                             Arena arena) {
        Layout layout = header.layout();
        List<Extent> extents = new ArrayList<>();
        extents.add(new Extent(0, headerBlock));
        for (int piece = 0; piece < header.pieceCount(); piece++) {
            int used = layout.pieceBytes(piece);
            int direct = used & -BLOCK_BYTES;
            for (int rank = 0; rank < layout.ranks(); rank++) {
                MemorySegment share = checkedShare(source, piece, rank, used);
                long offset = RecordFileFormat.shareOffset(layout, piece, rank);
                if (direct > 0) {
                    extents.add(new Extent(offset, share.asSlice(0, direct)));
                }
                if (used > direct) {
                    MemorySegment tail = arena.allocate(BLOCK_BYTES, BLOCK_BYTES);
                    MemorySegment.copy(share, direct, tail, 0, used - direct);
                    extents.add(new Extent(offset + direct, tail));
                }
            }
        }
        return extents;
    }

    private static List<Extent> readExtents(RecordHeader header, ShareMemory target) {
        Layout layout = header.layout();
        boolean wholePages = header.version() == RecordFileFormat.VERSION_WHOLE_CHECKSUM;
        List<Extent> extents = new ArrayList<>();
        for (int piece = 0; piece < header.pieceCount(); piece++) {
            int bytes = wholePages ? layout.pageBytes() : RecordFileFormat.transferBytes(layout, piece);
            for (int rank = 0; rank < layout.ranks(); rank++) {
                MemorySegment share = checkedShare(target, piece, rank, bytes);
                extents.add(new Extent(RecordFileFormat.shareOffset(layout, piece, rank), share.asSlice(0, bytes)));
            }
        }
        return extents;
    }

    private static MemorySegment checkedShare(ShareMemory memory, int piece, int rank, long bytes) {
        MemorySegment share = memory.share(piece, rank);
        if (share == null || !share.isNative() || share.address() % BLOCK_BYTES != 0 || share.byteSize() < bytes) {
            throw new IllegalArgumentException("share of piece " + piece + ", rank " + rank + " is " + (share == null
                    ? "missing" : (share.isNative() ? "" : "on the heap, ") + share.byteSize() + " bytes at 0x"
                    + Long.toHexString(share.address())) + "; O_DIRECT needs native memory, 4096-aligned, of at least "
                    + bytes + " bytes");
        }
        return share;
    }

    private List<Run> runs(List<Extent> extents) {
        List<Run> runs = new ArrayList<>();
        List<MemorySegment> buffers = new ArrayList<>();
        long start = 0;
        long end = 0;
        for (Extent extent : extents) {
            long size = extent.buffer().byteSize();
            for (long at = 0; at < size; at += runBytes) {
                MemorySegment part = extent.buffer().asSlice(at, Math.min(runBytes, size - at));
                long offset = extent.offset() + at;
                boolean joins = !buffers.isEmpty() && offset == end && end - start + part.byteSize() <= runBytes
                        && buffers.size() < NativeIo.IOV_MAX_BUFFERS;
                if (!joins) {
                    if (!buffers.isEmpty()) {
                        runs.add(new Run(start, List.copyOf(buffers)));
                        buffers.clear();
                    }
                    start = offset;
                }
                buffers.add(part);
                end = offset + part.byteSize();
            }
        }
        if (!buffers.isEmpty()) {
            runs.add(new Run(start, List.copyOf(buffers)));
        }
        return runs;
    }

    /**
     * Moves every run, on the caller and up to {@code transfersPerRecord - 1} helpers, while the caller also runs
     * {@code alongside}; returns once every started transfer has finished, rethrowing the first failure.
     */
    private void transfer(OpenFile file, List<Run> runs, boolean write, Runnable alongside) throws IOException {
        int count = runs.size();
        AtomicInteger next = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch finished = new CountDownLatch(count);
        Runnable worker = () -> {
            for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
                try {
                    if (failure.get() == null) {
                        Run run = runs.get(i);
                        transferFully(file, run.buffers(), run.offset(), write);
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    finished.countDown();
                }
            }
        };
        int helpers = Math.min(transfersPerRecord, count) - 1;
        for (int h = 0; h < helpers; h++) {
            try {
                executor.execute(worker);
            } catch (RejectedExecutionException e) {
                break;
            }
        }
        if (alongside != null) {
            try {
                alongside.run();
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }
        worker.run();
        awaitUninterruptibly(finished);
        Throwable t = failure.get();
        if (t != null) {
            throw rethrown(t);
        }
    }

    private void transferFully(OpenFile file, List<MemorySegment> buffers, long offset, boolean write)
            throws IOException {
        List<MemorySegment> pending = buffers;
        long at = offset;
        long remaining = 0;
        for (MemorySegment buffer : buffers) {
            remaining += buffer.byteSize();
        }
        while (remaining > 0) {
            long n = write ? ops.write(file, pending, at) : ops.read(file, pending, at);
            if (n <= 0) {
                if (write) {
                    throw new IOException("write to " + file.path() + " at offset " + at + " made no progress");
                }
                throw new RecordFormatException(RecordFormatException.Kind.TRUNCATED, "the file ended at offset "
                        + at + " while " + remaining + " more bytes were expected");
            }
            remaining -= n;
            at += n;
            pending = advance(pending, n);
        }
    }

    private static List<MemorySegment> advance(List<MemorySegment> buffers, long bytes) {
        List<MemorySegment> rest = new ArrayList<>(buffers.size());
        long skip = bytes;
        for (MemorySegment buffer : buffers) {
            if (skip >= buffer.byteSize()) {
                skip -= buffer.byteSize();
            } else {
                rest.add(skip > 0 ? buffer.asSlice(skip) : buffer);
                skip = 0;
            }
        }
        return rest;
    }

    private void closeQuietly(OpenFile file, Throwable primary) {
        try {
            ops.close(file);
        } catch (IOException | RuntimeException e) {
            if (primary != null) {
                primary.addSuppressed(e);
            }
        }
    }

    private void deleteQuietly(Path file, Throwable primary) {
        try {
            ops.delete(file);
        } catch (IOException | RuntimeException e) {
            primary.addSuppressed(e);
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static IOException rethrown(Throwable t) {
        return switch (t) {
            case IOException e -> e;
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            default -> new IOException(t);
        };
    }

    private static void requireNativeIo() {
        if (!NativeIo.isAvailable()) {
            throw new UnsupportedOperationException("the disk tier needs native O_DIRECT I/O, which is unavailable: "
                    + NativeIo.unavailabilityCause(), NativeIo.unavailabilityCause());
        }
    }
}

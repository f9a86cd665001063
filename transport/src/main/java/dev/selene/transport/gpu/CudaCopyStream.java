package dev.selene.transport.gpu;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * One copy direction of the JCuda copier: its CUDA stream, a submitter thread that turns queued plans into
 * batches of device work, and a completion thread that waits for each batch's event and completes its futures.
 *
 * <pre>
 *   caller (an actor)      submitter thread                      completion thread
 *   validate, enqueue  →   take what is queued (one batch)   →   await the batch's event
 *                          piece table → device, kernel or        unpin, release the table,
 *                          copies, record an event                complete the futures
 * </pre>
 *
 * <p>Neither thread is a dispatcher thread: enqueueing hundreds of JCuda calls (per-piece mode) and waiting for an
 * event both block, and the layout of the code keeps blocking work off the default dispatcher. Batching takes whatever has queued while
 * the previous batch was being enqueued, so one kernel launch and one event serve many plans under load and one
 * plan when idle.
 *
 * <p>Piece tables live in a small pool of {@link TableBuffer}s (registered host memory plus a device copy); a
 * buffer returns to the pool when its batch's event has fired, so the submitter never overwrites a table the
 * device has not read yet. The staging buffer of {@link CopyMode#KERNEL_STAGED} is one per stream: work on a stream
 * runs in order, so the next batch's gather cannot start before the previous batch's transfers have finished.
 */
final class CudaCopyStream {

    /** The two directions, each with its own stream and threads. */
    enum Direction {
        TO_HOST("d2h"), TO_DEVICE("h2d");

        final String label;

        Direction(String label) {
            this.label = label;
        }
    }

    /** Limits of one batch and of the table pool. */
    record Settings(int maxBatchPieces, long maxBatchBytes, int tableBuffers) {
        static final Settings DEFAULT = new Settings(16_384, 64L << 20, 4);

        Settings {
            if (maxBatchPieces < 1 || maxBatchBytes < 1 || tableBuffers < 1) {
                throw new IllegalArgumentException("batch limits must be positive: " + maxBatchPieces + " pieces, "
                        + maxBatchBytes + " bytes, " + tableBuffers + " table buffers");
            }
        }
    }

    private static final Logger log = LoggerFactory.getLogger(CudaCopyStream.class);
    private static final int TABLE_ARRAYS = 3;
    private static final long STAGING_GRANULE_BYTES = 1L << 20;

    private final CudaDriver driver;
    private final Direction direction;
    private final CopyMode mode;
    private final Settings settings;
    private final CudaDriver.Stream stream;
    private final LinkedBlockingQueue<PendingCopy> queue = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<Batch> inFlight = new LinkedBlockingQueue<>();
    private final BlockingQueue<TableBuffer> tables;
    private final List<TableBuffer> allTables = new ArrayList<>();
    private final Thread submitter;
    private final Thread completer;
    /** Told the CUDA error when the device reports a failure (the context is then failed for good). */
    private final java.util.function.Consumer<String> deviceFailed;
    private final LongAdder bytesCopied = new LongAdder();
    private final LongAdder batches = new LongAdder();
    /** Staging buffer of KERNEL_STAGED; confined to the submitter thread (and close, after it stopped). */
    private long stagingAddress;
    private long stagingBytes;
    private volatile boolean closed;

    CudaCopyStream(CudaDriver driver, Direction direction, CopyMode mode, Settings settings,
                   java.util.function.Consumer<String> deviceFailed) {
        this.driver = driver;
        this.deviceFailed = deviceFailed;
        this.direction = direction;
        this.mode = mode;
        this.settings = settings;
        this.stream = driver.createStream();
        this.tables = new ArrayBlockingQueue<>(settings.tableBuffers());
        try {
            if (mode != CopyMode.PER_PIECE) {
                for (int i = 0; i < settings.tableBuffers(); i++) {
                    TableBuffer table = new TableBuffer(driver, Math.min(settings.maxBatchPieces(), 4096));
                    allTables.add(table);
                    tables.add(table);
                }
            }
        } catch (RuntimeException e) {
            allTables.forEach(TableBuffer::free);
            stream.close();
            throw e;
        }
        this.submitter = Thread.ofPlatform().daemon().name("cuda-" + direction.label + "-submit")
                .unstarted(this::submitLoop);
        this.completer = Thread.ofPlatform().daemon().name("cuda-" + direction.label + "-complete")
                .unstarted(this::completeLoop);
        submitter.start();
        completer.start();
    }

    /** Queues a validated copy; its future completes on the completion thread. */
    void submit(PendingCopy copy) {
        if (closed) {
            copy.finish(closedFailure(copy));
            return;
        }
        queue.add(copy);
        if (closed && queue.remove(copy)) {
            copy.finish(closedFailure(copy));
        }
    }

    /** Bytes of plans that completed successfully. */
    long bytesCopied() {
        return bytesCopied.sum();
    }

    /** Batches enqueued so far. */
    long batches() {
        return batches.sum();
    }

    /**
     * Stops taking plans, fails those not yet enqueued, waits up to {@code waitNanos} for enqueued ones, and frees
     * the stream's resources.
     */
    void close(long waitNanos) {
        closed = true;
        submitter.interrupt();
        join(submitter, waitNanos);
        PendingCopy left;
        while ((left = queue.poll()) != null) {
            left.finish(closedFailure(left));
        }
        inFlight.add(Batch.END);
        join(completer, waitNanos);
        if (completer.isAlive()) {
            log.warn("cuda {} copies still running after close waited {} ms; their memory is not freed",
                    direction.label, TimeUnit.NANOSECONDS.toMillis(waitNanos));
            return;
        }
        quietly(stream::synchronize);
        allTables.forEach(TableBuffer::free);
        if (stagingAddress != 0) {
            long staging = stagingAddress;
            quietly(() -> driver.free(staging));
            stagingAddress = 0;
        }
        quietly(stream::close);
    }

    private void submitLoop() {
        List<PendingCopy> batch = new ArrayList<>();
        try {
            while (!closed) {
                batch.clear();
                PendingCopy first = queue.take();
                batch.add(first);
                long pieces = first.pieces();
                long bytes = first.bytes;
                PendingCopy next;
                while ((next = queue.peek()) != null && pieces + next.pieces() <= settings.maxBatchPieces()
                        && bytes + next.bytes <= settings.maxBatchBytes()) {
                    batch.add(queue.poll());
                    pieces += next.pieces();
                    bytes += next.bytes;
                }
                enqueue(List.copyOf(batch), (int) pieces, bytes);
            }
        } catch (InterruptedException e) {
            for (PendingCopy copy : batch) {
                if (!copy.future.isDone()) {
                    copy.finish(closedFailure(copy));
                }
            }
        }
    }

    /** Enqueues one batch's device work and hands its event to the completion thread. */
    private void enqueue(List<PendingCopy> batch, int pieces, long bytes) throws InterruptedException {
        TableBuffer table = null;
        try {
            if (mode != CopyMode.PER_PIECE && pieces > 0) {
                table = tables.take();
                table.ensureCapacity(pieces);
            }
            switch (mode) {
                case PER_PIECE -> enqueuePerPiece(batch);
                case KERNEL_DIRECT -> enqueueDirect(batch, pieces, table);
                case KERNEL_STAGED -> enqueueStaged(batch, pieces, table);
            }
            CudaDriver.Event event = stream.record();
            batches.increment();
            inFlight.add(new Batch(batch, table, event, bytes));
        } catch (InterruptedException e) {
            release(table);
            throw e;
        } catch (RuntimeException | Error e) {
            if (isContextFatal(e.getMessage())) {
                deviceFailed.accept(e.getMessage()); // an earlier kernel failed the context; this call reports it
            }
            quietly(stream::synchronize);
            release(table);
            IllegalStateException failure = new IllegalStateException(
                    "cuda " + direction.label + " copy could not be enqueued: " + e.getMessage(), e);
            for (PendingCopy copy : batch) {
                copy.finish(failure);
            }
        }
    }

    private void enqueuePerPiece(List<PendingCopy> batch) {
        for (PendingCopy copy : batch) {
            for (int i = 0; i < copy.pieces(); i++) {
                if (copy.lengths[i] == 0) {
                    continue;
                }
                if (direction == Direction.TO_HOST) {
                    stream.copyToHost(copy.host[i], copy.device[i], copy.lengths[i]);
                } else {
                    stream.copyToDevice(copy.device[i], copy.host[i], copy.lengths[i]);
                }
            }
        }
    }

    private void enqueueDirect(List<PendingCopy> batch, int pieces, TableBuffer table) {
        if (pieces == 0) {
            return;
        }
        int row = 0;
        for (PendingCopy copy : batch) {
            for (int i = 0; i < copy.pieces(); i++) {
                if (direction == Direction.TO_HOST) {
                    table.put(row++, copy.device[i], copy.hostView[i], copy.lengths[i]);
                } else {
                    table.put(row++, copy.hostView[i], copy.device[i], copy.lengths[i]);
                }
            }
        }
        launch(table, row);
    }

    private void enqueueStaged(List<PendingCopy> batch, int pieces, TableBuffer table) {
        if (pieces == 0) {
            return;
        }
        long[] host = new long[pieces];
        long[] lengths = new long[pieces];
        int row = 0;
        for (PendingCopy copy : batch) {
            for (int i = 0; i < copy.pieces(); i++) {
                host[row] = copy.host[i];
                lengths[row] = copy.lengths[i];
                row++;
            }
        }
        StagingLayout layout = StagingLayout.of(host, lengths, pieces);
        long staging = ensureStaging(layout.stagingBytes());
        row = 0;
        for (PendingCopy copy : batch) {
            for (int i = 0; i < copy.pieces(); i++) {
                long stagingAddress = staging + layout.stagingOffset(row);
                if (direction == Direction.TO_HOST) {
                    table.put(row, copy.device[i], stagingAddress, copy.lengths[i]);
                } else {
                    table.put(row, stagingAddress, copy.device[i], copy.lengths[i]);
                }
                row++;
            }
        }
        if (direction == Direction.TO_HOST) {
            launch(table, row);
            for (StagingLayout.Run run : layout.runs()) {
                stream.copyToHost(run.host(), staging + run.staging(), run.bytes());
            }
        } else {
            for (StagingLayout.Run run : layout.runs()) {
                stream.copyToDevice(staging + run.staging(), run.host(), run.bytes());
            }
            launch(table, row);
        }
    }

    /** Sends the table's first {@code rows} rows to the device and launches this direction's kernel over them. */
    private void launch(TableBuffer table, int rows) {
        long tableBytes = (long) rows * TABLE_ARRAYS * Long.BYTES;
        table.pack(rows);
        stream.copyToDevice(table.deviceAddress, table.hostAddress(), tableBytes);
        long src = table.deviceAddress;
        long dst = src + (long) rows * Long.BYTES;
        long len = dst + (long) rows * Long.BYTES;
        stream.launch(direction == Direction.TO_HOST ? CudaDriver.Kernel.GATHER : CudaDriver.Kernel.SCATTER,
                src, dst, len, rows);
    }

    /** The staging buffer's address, grown (after the stream has drained) when it is smaller than {@code bytes}. */
    private long ensureStaging(long bytes) {
        if (bytes <= stagingBytes) {
            return stagingAddress;
        }
        long grown = Math.max(bytes, 2 * stagingBytes);
        grown = (grown + STAGING_GRANULE_BYTES - 1) / STAGING_GRANULE_BYTES * STAGING_GRANULE_BYTES;
        if (stagingAddress != 0) {
            stream.synchronize();
            driver.free(stagingAddress);
            stagingAddress = 0;
            stagingBytes = 0;
        }
        stagingAddress = driver.allocate(grown);
        stagingBytes = grown;
        return stagingAddress;
    }

    private void completeLoop() {
        while (true) {
            Batch batch;
            try {
                batch = inFlight.take();
            } catch (InterruptedException e) {
                continue;
            }
            if (batch == Batch.END) {
                return;
            }
            Throwable failure = null;
            try {
                batch.event.await();
            } catch (RuntimeException | Error e) {
                failure = new IllegalStateException("cuda " + direction.label + " copy failed on the device: "
                        + e.getMessage(), e);
                deviceFailed.accept(e.getMessage());
            }
            quietly(batch.event::close);
            release(batch.table);
            if (failure == null) {
                bytesCopied.add(batch.bytes);
            }
            for (PendingCopy copy : batch.copies) {
                copy.finish(failure);
            }
        }
    }

    /**
     * The CUDA errors that leave the context unusable (every later call returns them): what a failed kernel or
     * copy leaves behind. Any call may be the first to report one; an invalid argument, by contrast, fails only its
     * own call.
     */
    static final java.util.List<String> CONTEXT_FATAL_ERRORS = java.util.List.of("CUDA_ERROR_ILLEGAL_ADDRESS",
            "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS",
            "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_HARDWARE_STACK_ERROR",
            "CUDA_ERROR_ECC_UNCORRECTABLE", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_ASSERT",
            "CUDA_ERROR_CONTEXT_IS_DESTROYED");

    /** Whether {@code message} names an error in {@link #CONTEXT_FATAL_ERRORS}. */
    static boolean isContextFatal(String message) {
        return message != null && CONTEXT_FATAL_ERRORS.stream().anyMatch(message::contains);
    }

    private void release(TableBuffer table) {
        if (table != null) {
            tables.add(table);
        }
    }

    private IllegalStateException closedFailure(PendingCopy copy) {
        return new IllegalStateException("cuda device copier closed before " + copy.plan + " was copied");
    }

    private static void join(Thread thread, long waitNanos) {
        try {
            thread.join(java.time.Duration.ofNanos(waitNanos));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void quietly(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException | Error e) {
            log.debug("ignored during cleanup: {}", e.toString());
        }
    }

    /** One enqueued batch: its plans, its table (null in per-piece mode), its event. */
    private record Batch(List<PendingCopy> copies, TableBuffer table, CudaDriver.Event event, long bytes) {
        static final Batch END = new Batch(List.of(), null, null, 0);
    }

    /**
     * A piece table: three arrays (src, dst, len) of 64-bit entries, written in registered host memory and copied to
     * a device buffer of the same size before the kernel that reads it. Confined to the thread that holds it.
     */
    private static final class TableBuffer {
        private final CudaDriver driver;
        private Arena arena;
        private MemorySegment host;
        private long deviceAddress;
        private int capacity;
        private long[] src = new long[0];
        private long[] dst = new long[0];
        private long[] len = new long[0];

        TableBuffer(CudaDriver driver, int capacity) {
            this.driver = driver;
            allocate(capacity);
        }

        long hostAddress() {
            return host.address();
        }

        void ensureCapacity(int pieces) {
            if (pieces > capacity) {
                free();
                allocate(Math.max(pieces, 2 * capacity));
            }
        }

        void put(int row, long from, long to, long bytes) {
            src[row] = from;
            dst[row] = to;
            len[row] = bytes;
        }

        /** Writes rows {@code 0 .. rows-1} as src[rows] dst[rows] len[rows] at the start of the host buffer. */
        void pack(int rows) {
            MemorySegment.copy(src, 0, host, ValueLayout.JAVA_LONG, 0, rows);
            MemorySegment.copy(dst, 0, host, ValueLayout.JAVA_LONG, (long) rows * Long.BYTES, rows);
            MemorySegment.copy(len, 0, host, ValueLayout.JAVA_LONG, 2L * rows * Long.BYTES, rows);
        }

        private void allocate(int pieces) {
            long bytes = (long) pieces * TABLE_ARRAYS * Long.BYTES;
            bytes = (bytes + 4095) & -4096L;
            Arena newArena = Arena.ofShared();
            try {
                MemorySegment segment = newArena.allocate(bytes, 4096);
                driver.registerHost(segment.address(), bytes);
                try {
                    deviceAddress = driver.allocate(bytes);
                } catch (RuntimeException e) {
                    driver.unregisterHost(segment.address());
                    throw e;
                }
                arena = newArena;
                host = segment;
                capacity = pieces;
                src = new long[pieces];
                dst = new long[pieces];
                len = new long[pieces];
            } catch (RuntimeException e) {
                newArena.close();
                throw e;
            }
        }

        void free() {
            if (arena == null) {
                return;
            }
            long hostAddress = host.address();
            long device = deviceAddress;
            quietly(() -> driver.unregisterHost(hostAddress));
            quietly(() -> driver.free(device));
            arena.close();
            arena = null;
            host = null;
            deviceAddress = 0;
            capacity = 0;
        }
    }
}

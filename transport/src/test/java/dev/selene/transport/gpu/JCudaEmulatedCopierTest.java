package dev.selene.transport.gpu;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JCuda copier's logic — validation, batching, piece tables, staging runs, events, completion, failure, close —
 * on the CPU, over an {@link EmulatedDriver} that behaves like the CUDA driver where it matters: asynchronous
 * in-order streams, registered host memory seen by kernels only through its device pointer, sticky errors, and a
 * check of every address a copy or kernel touches. Only {@link JCudaBinding} (the JCuda calls) is left to the
 * {@code gpu}-tagged tests.
 */
class JCudaEmulatedCopierTest {

    /** Small limits so that tests cross batch, table and staging boundaries. */
    static final CudaCopyStream.Settings SMALL = new CudaCopyStream.Settings(64, 1 << 20, 2);

    @Nested
    class PerPiece extends DeviceCopierContract {
        @Override
        protected DeviceCopier createCopier() {
            return JCudaDeviceCopier.over(new EmulatedDriver(), CopyMode.PER_PIECE, SMALL);
        }
    }

    @Nested
    class KernelDirect extends DeviceCopierContract {
        @Override
        protected DeviceCopier createCopier() {
            return JCudaDeviceCopier.over(new EmulatedDriver(), CopyMode.KERNEL_DIRECT, SMALL);
        }
    }

    @Nested
    class KernelStaged extends DeviceCopierContract {
        @Override
        protected DeviceCopier createCopier() {
            return JCudaDeviceCopier.over(new EmulatedDriver(), CopyMode.KERNEL_STAGED, SMALL);
        }
    }

    @Nested
    class DefaultSettings extends DeviceCopierContract {
        @Override
        protected DeviceCopier createCopier() {
            return JCudaDeviceCopier.over(new EmulatedDriver(), CopyMode.KERNEL_DIRECT, CudaCopyStream.Settings.DEFAULT);
        }
    }

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
    }

    @Test
    void kernelDirect_movesRecordsWithKernels_andNoCopyEngineCallPerPiece() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_DIRECT, CudaCopyStream.Settings.DEFAULT);
        Layout layout = Layout.deepseekTp4();
        RoundTrip trip = roundTrip(copier, layout, 4, false);

        assertTrue(trip.intact, "records round-trip byte-identically");
        assertTrue(driver.launches.get() >= 2, "at least one gather and one scatter");
        assertEquals(driver.launches.get(), driver.tableCopies.get(), "one piece table copy per launch");
        assertEquals(0, driver.asyncCopies.get() - driver.tableCopies.get(), "no per-piece copy-engine calls");
        assertEquals(4L * layout.recordBytes(true), copier.bytesCopiedToHost());
        assertEquals(4L * layout.recordBytes(true), copier.bytesCopiedToDevice());
    }

    @Test
    void perPiece_issuesOneCopyEngineCallPerPiece() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.PER_PIECE, CudaCopyStream.Settings.DEFAULT);
        Layout layout = Layout.qwenTp1();
        RoundTrip trip = roundTrip(copier, layout, 2, false);

        assertTrue(trip.intact);
        assertEquals(0, driver.launches.get());
        assertEquals(2L * 2 * layout.slotsPerRecord(true) * layout.ranks(), driver.asyncCopies.get());
    }

    @Test
    void staged_recordsInContiguousSlots_moveInOneTransferPerRecordOrFewer() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_STAGED, CudaCopyStream.Settings.DEFAULT);
        Layout layout = Layout.deepseekTp4();
        RoundTrip trip = roundTrip(copier, layout, 3, true);

        assertTrue(trip.intact);
        long runCopies = driver.asyncCopies.get() - driver.tableCopies.get();
        assertTrue(runCopies >= 2 && runCopies <= 2 * 3 * 2, "runs: " + runCopies);
        assertEquals(driver.launches.get(), driver.tableCopies.get());
    }

    @ParameterizedTest
    @EnumSource(CopyMode.class)
    void deviceSideFailure_failsTheFutureNamingTheCudaError_andReleasesTheAllocations(CopyMode mode)
            throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, mode, SMALL);
        Layout layout = Layout.small();
        HostMemory host = host(layout, 4);
        copier.register(host);
        long device = copier.allocateDevice(layout.pageBytes());
        CopyPlan plan = new CopyPlan(new long[] {device}, new long[] {host.address(0, 0)},
                new int[] {layout.pageBytes()});
        driver.failNextOperation("CUDA_ERROR_ILLEGAL_ADDRESS (injected)");

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> copier.copyToHost(plan).get(30, TimeUnit.SECONDS));

        assertTrue(e.getCause().getMessage().contains("CUDA_ERROR_ILLEGAL_ADDRESS"), e.getCause().getMessage());
        copier.freeDevice(device);
        assertEquals(0, copier.allocatedBytes());
    }

    @Test
    void freeDevice_waitsForTheCopiesThatUseTheAllocation() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_DIRECT, SMALL);
        Layout layout = Layout.small();
        HostMemory host = host(layout, 8);
        copier.register(host);
        int before = driver.liveAllocations();
        long device = copier.allocateDevice(layout.pageBytes());
        driver.operationDelayNanos = TimeUnit.MILLISECONDS.toNanos(20);
        List<CompletableFuture<Void>> copies = new ArrayList<>();
        for (int slot = 0; slot < 8; slot++) {
            copies.add(copier.copyToHost(new CopyPlan(new long[] {device}, new long[] {host.address(slot, 0)},
                    new int[] {layout.pageBytes()})));
        }

        copier.freeDevice(device);

        assertTrue(copies.stream().allMatch(CompletableFuture::isDone), "free returned only after the copies");
        for (CompletableFuture<Void> copy : copies) {
            copy.get();
        }
        assertEquals(before, driver.liveAllocations());
        assertEquals(0, copier.allocatedBytes());
    }

    @Test
    void manyQueuedPlans_shareBatches() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        driver.operationDelayNanos = TimeUnit.MILLISECONDS.toNanos(2);
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_DIRECT, CudaCopyStream.Settings.DEFAULT);
        Layout layout = Layout.small();
        HostMemory host = host(layout, 200);
        copier.register(host);
        long device = copier.allocateDevice(layout.pageBytes());
        List<CompletableFuture<Void>> copies = new ArrayList<>();
        for (int slot = 0; slot < 200; slot++) {
            copies.add(copier.copyToHost(new CopyPlan(new long[] {device}, new long[] {host.address(slot, 1)},
                    new int[] {layout.pageBytes()})));
        }
        CompletableFuture.allOf(copies.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

        assertTrue(copier.batches() < 200, "200 plans in " + copier.batches() + " batches");
    }

    @Test
    void aPlanWithMorePiecesThanABatch_growsItsTable_andLandsIntact() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_DIRECT, new CudaCopyStream.Settings(4, 1 << 20, 1));
        RoundTrip trip = roundTrip(copier, Layout.qwenTp1(), 1, false);

        assertTrue(trip.intact);
    }

    @Test
    void register_afterTheOldMappingClosed_unregistersItFirst() {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_DIRECT, SMALL);
        HostMemory first = HostMemory.allocate(Layout.small(), 4);
        long firstAddress = first.segment().address();
        copier.register(first);
        copier.register(first);
        assertEquals(1, driver.registerCalls(firstAddress), "registered once");
        first.close();

        HostMemory second = host(Layout.small(), 4);
        copier.register(second);

        assertFalse(driver.isRegistered(firstAddress) && firstAddress != second.segment().address(),
                "the closed mapping was unregistered");
        assertTrue(driver.isRegistered(second.segment().address()));
    }

    @Test
    void plansIntoAClosedMapping_failWithAMessageSayingSo() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_DIRECT, SMALL);
        HostMemory mapping = HostMemory.allocate(Layout.small(), 4);
        copier.register(mapping);
        long device = copier.allocateDevice(4096);
        long address = mapping.address(1, 0);
        mapping.close();

        ExecutionException e = assertThrows(ExecutionException.class, () -> copier.copyToHost(
                new CopyPlan(new long[] {device}, new long[] {address}, new int[] {4096})).get(30, TimeUnit.SECONDS));

        assertTrue(e.getCause().getMessage().contains("closed"), e.getCause().getMessage());
    }

    @Test
    void close_unregistersHostMemory_freesDeviceMemory_andClosesTheDriver() {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = JCudaDeviceCopier.over(driver, CopyMode.KERNEL_STAGED, SMALL);
        HostMemory mapping = host(Layout.small(), 4);
        copier.register(mapping);
        copier.allocateDevice(1 << 20);

        copier.close();

        assertEquals(0, driver.liveAllocations());
        assertEquals(0, driver.registrations());
        assertTrue(driver.closed.get());
        assertTrue(copier.copyToHost(new CopyPlan(new long[0], new long[0], new int[0])).isCompletedExceptionally());
        assertThrows(IllegalStateException.class, () -> copier.allocateDevice(4096));
    }

    @Test
    void callersOnManyThreads_allocateFillAndVerifyConcurrently() throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, CopyMode.KERNEL_DIRECT, SMALL);
        Layout layout = Layout.small();
        try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                RecordKey key = new RecordKey("threads", i);
                results.add(pool.submit(() -> {
                    long base = copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true));
                    DevicePlacement placement = DevicePlacement.contiguous(layout, base, true);
                    KeyedContent.fillRecord(copier, layout, placement, key, true);
                    boolean ok = KeyedContent.verifyRecord(copier, layout, placement, key, true);
                    copier.freeDevice(base);
                    return ok;
                }));
            }
            for (Future<Boolean> result : results) {
                assertTrue(result.get(30, TimeUnit.SECONDS));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(CopyMode.class)
    void writeDevice_fromPageableMemory_isOnTheDeviceBeforeItReturns_soTheNextPlanCopiesItsBytes(CopyMode mode)
            throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, mode, SMALL);
        Layout layout = Layout.small();
        HostMemory host = host(layout, 4);
        copier.register(host);
        long device = copier.allocateDevice(layout.pageBytes());
        for (int round = 1; round <= 3; round++) {
            byte[] pattern = new byte[layout.pageBytes()];
            java.util.Arrays.fill(pattern, (byte) (round * 37));
            copier.writeDevice(device, MemorySegment.ofArray(pattern)); // heap memory: pageable
            copier.copyToHost(new CopyPlan(new long[] {device}, new long[] {host.address(0, 0)},
                    new int[] {layout.pageBytes()})).get(30, TimeUnit.SECONDS);
            byte[] landed = host.share(0, 0, layout.pageBytes()).toArray(ValueLayout.JAVA_BYTE);
            assertTrue(java.util.Arrays.equals(pattern, landed), "round " + round + ": the plan copied what "
                    + "writeDevice wrote, not what the device held before it");
        }
    }

    @ParameterizedTest
    @EnumSource(CopyMode.class)
    void afterADeviceSideFailure_theCopierSaysItIsUnusable_andRefusesEveryLaterCallWithThatReason(CopyMode mode)
            throws Exception {
        EmulatedDriver driver = new EmulatedDriver();
        JCudaDeviceCopier copier = open(driver, mode, SMALL);
        Layout layout = Layout.small();
        HostMemory host = host(layout, 4);
        copier.register(host);
        long device = copier.allocateDevice(layout.pageBytes());
        CopyPlan plan = new CopyPlan(new long[] {device}, new long[] {host.address(0, 0)},
                new int[] {layout.pageBytes()});
        assertTrue(copier.isAvailable());
        driver.failNextOperation("CUDA_ERROR_ILLEGAL_ADDRESS (injected)");
        assertThrows(ExecutionException.class, () -> copier.copyToHost(plan).get(30, TimeUnit.SECONDS));

        assertFalse(copier.isAvailable(), "a failed context fails every later call: the copier says so");
        String cause = copier.unavailabilityCause();
        assertTrue(cause != null && cause.contains("CUDA_ERROR_ILLEGAL_ADDRESS") && !cause.contains("\n"), cause);
        for (CompletableFuture<Void> later : List.of(copier.copyToDevice(plan), copier.copyToHost(plan))) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> later.get(30, TimeUnit.SECONDS));
            assertEquals(cause, e.getCause().getMessage(), "refused at once, with the reason");
        }
        IllegalStateException write = assertThrows(IllegalStateException.class,
                () -> copier.writeDevice(device, MemorySegment.ofArray(new byte[16])));
        assertEquals(cause, write.getMessage());
        assertEquals(cause, assertThrows(IllegalStateException.class, () -> copier.allocateDevice(4096)).getMessage());
        copier.freeDevice(device);
        assertEquals(0, copier.allocatedBytes(), "its allocations are still released");
    }

    @Test
    void copyMode_parsesLabels_andRejectsUnknownNamesWithTheAllowedOnes() {
        assertEquals(CopyMode.KERNEL_STAGED, CopyMode.parse("kernel-staged"));
        assertEquals(CopyMode.PER_PIECE, CopyMode.parse(" PER_PIECE "));
        assertEquals("kernel-direct", CopyMode.KERNEL_DIRECT.label());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CopyMode.parse("dma"));
        assertTrue(e.getMessage().contains("per-piece, kernel-direct, kernel-staged"), e.getMessage());
    }

    private JCudaDeviceCopier open(EmulatedDriver driver, CopyMode mode, CudaCopyStream.Settings settings) {
        JCudaDeviceCopier copier = JCudaDeviceCopier.over(driver, mode, settings);
        toClose.add(copier);
        return copier;
    }

    private HostMemory host(Layout layout, int slots) {
        HostMemory host = HostMemory.allocate(layout, slots);
        toClose.add(host);
        return host;
    }

    private record RoundTrip(boolean intact) {
    }

    /** Publishes {@code records} records into (contiguous or interleaved) slots and restores them elsewhere. */
    private RoundTrip roundTrip(JCudaDeviceCopier copier, Layout layout, int records, boolean contiguousSlots)
            throws Exception {
        int pieces = layout.slotsPerRecord(true);
        HostMemory host = host(layout, records * pieces);
        copier.register(host);
        List<SlotList> slots = new ArrayList<>();
        List<CompletableFuture<Void>> toHost = new ArrayList<>();
        for (int r = 0; r < records; r++) {
            int[] s = new int[pieces];
            for (int p = 0; p < pieces; p++) {
                s[p] = contiguousSlots ? r * pieces + p : p * records + r;
            }
            slots.add(SlotList.of(s));
            long base = copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true));
            DevicePlacement source = DevicePlacement.contiguous(layout, base, true);
            KeyedContent.fillRecord(copier, layout, source, new RecordKey("trip", r), true);
            toHost.add(copier.copyToHost(CopyPlans.forRecord(layout, host, slots.get(r), source, true)));
        }
        CompletableFuture.allOf(toHost.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        boolean intact = true;
        List<DevicePlacement> targets = new ArrayList<>();
        List<CompletableFuture<Void>> toDevice = new ArrayList<>();
        for (int r = 0; r < records; r++) {
            intact &= KeyedContent.verifyHostRecord(layout, host, slots.get(r), new RecordKey("trip", r), true);
            DevicePlacement target = DevicePlacement.contiguous(layout,
                    copier.allocateDevice(DevicePlacement.bytesNeeded(layout, true)), true);
            targets.add(target);
            toDevice.add(copier.copyToDevice(CopyPlans.forRecord(layout, host, slots.get(r), target, true)));
        }
        CompletableFuture.allOf(toDevice.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        for (int r = 0; r < records; r++) {
            intact &= KeyedContent.verifyRecord(copier, layout, targets.get(r), new RecordKey("trip", r), true);
        }
        return new RoundTrip(intact);
    }

    /**
     * A CPU stand-in for the CUDA driver. Device memory is off-heap memory of its own; registered host memory is seen
     * by kernels only at {@code address + VIEW_OFFSET} (as a device pointer distinct from the host address), so a
     * kernel handed a raw host address fails like a GPU would. Every copy and kernel checks every byte range it
     * touches against live allocations and registrations and fails the stream (sticky, like a CUDA context) instead
     * of touching memory it does not own.
     */
    static final class EmulatedDriver implements CudaDriver {
        static final long VIEW_OFFSET = 1L << 56;

        final AtomicInteger launches = new AtomicInteger();
        /**
         * Asynchronous copies on the copier's two copy streams (the first two streams made; the stream of
         * writeDevice and readDevice is made later, on first use, and its copies are not counted).
         */
        final AtomicLong asyncCopies = new AtomicLong();
        private final AtomicInteger streamsMade = new AtomicInteger();
        final AtomicLong tableCopies = new AtomicLong();
        final AtomicBoolean closed = new AtomicBoolean();
        volatile long operationDelayNanos;
        private volatile String injectedFailure;
        /** The context's sticky error: once a stream fails, every later call fails with it, as in a CUDA context. */
        private volatile RuntimeException contextError;
        private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        private final TreeMap<Long, Arena> arenas = new TreeMap<>();
        private final TreeMap<Long, MemorySegment> device = new TreeMap<>();
        private final TreeMap<Long, MemorySegment> registered = new TreeMap<>();
        private final Map<Long, Integer> registerCalls = new java.util.concurrent.ConcurrentHashMap<>();

        void failNextOperation(String error) {
            injectedFailure = error;
        }

        int liveAllocations() {
            lock.readLock().lock();
            try {
                return device.size();
            } finally {
                lock.readLock().unlock();
            }
        }

        int registrations() {
            lock.readLock().lock();
            try {
                return registered.size();
            } finally {
                lock.readLock().unlock();
            }
        }

        int registerCalls(long address) {
            return registerCalls.getOrDefault(address, 0);
        }

        boolean isRegistered(long address) {
            lock.readLock().lock();
            try {
                return registered.containsKey(address);
            } finally {
                lock.readLock().unlock();
            }
        }

        @Override
        public String describe() {
            return "emulated CUDA device";
        }

        @Override
        public long allocate(long bytes) {
            ensureOpen();
            Arena arena = Arena.ofShared();
            MemorySegment segment = arena.allocate(bytes, 256);
            lock.writeLock().lock();
            try {
                arenas.put(segment.address(), arena);
                device.put(segment.address(), segment);
            } finally {
                lock.writeLock().unlock();
            }
            return segment.address();
        }

        @Override
        public void free(long address) {
            lock.writeLock().lock();
            try {
                Arena arena = arenas.remove(address);
                if (arena == null) {
                    throw new IllegalArgumentException("CUDA_ERROR_INVALID_VALUE: cuMemFree of 0x"
                            + Long.toHexString(address));
                }
                device.remove(address);
                arena.close();
            } finally {
                lock.writeLock().unlock();
            }
        }

        @Override
        public long registerHost(long address, long bytes) {
            ensureOpen();
            lock.writeLock().lock();
            try {
                Map.Entry<Long, MemorySegment> below = registered.floorEntry(address + bytes - 1);
                if (below != null && below.getKey() + below.getValue().byteSize() > address) {
                    throw new IllegalStateException("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED at 0x"
                            + Long.toHexString(address));
                }
                registered.put(address, MemorySegment.ofAddress(address).reinterpret(bytes));
                registerCalls.merge(address, 1, Integer::sum);
            } finally {
                lock.writeLock().unlock();
            }
            return address + VIEW_OFFSET;
        }

        @Override
        public void unregisterHost(long address) {
            lock.writeLock().lock();
            try {
                if (registered.remove(address) == null) {
                    throw new IllegalStateException("CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED at 0x"
                            + Long.toHexString(address));
                }
            } finally {
                lock.writeLock().unlock();
            }
        }

        @Override
        public Stream createStream() {
            ensureOpen();
            return new EmulatedStream();
        }

        @Override
        public void close() {
            closed.set(true);
        }

        private void ensureOpen() {
            if (closed.get()) {
                throw new IllegalStateException("CUDA_ERROR_DEINITIALIZED: emulated driver closed");
            }
            RuntimeException sticky = contextError;
            if (sticky != null) {
                throw new IllegalStateException(sticky.getMessage() + " (sticky: the context failed earlier)");
            }
        }

        /** Device memory {@code [address, address + bytes)}; caller holds the lock. */
        private MemorySegment deviceRange(long address, long bytes) {
            MemorySegment range = within(device, address, bytes);
            if (range == null) {
                throw new IllegalStateException("CUDA_ERROR_ILLEGAL_ADDRESS: device range 0x"
                        + Long.toHexString(address) + " + " + bytes);
            }
            return range;
        }

        /** Registered (pinned) host memory at its host address; caller holds the lock. */
        private MemorySegment pinnedHost(long address, long bytes) {
            MemorySegment range = within(registered, address, bytes);
            if (range == null) {
                throw new IllegalStateException("CUDA_ERROR_INVALID_VALUE: async copy with unregistered host range 0x"
                        + Long.toHexString(address) + " + " + bytes);
            }
            return range;
        }

        /** What a kernel may touch: device memory or registered host memory through its device view. */
        private MemorySegment kernelRange(long address, long bytes) {
            MemorySegment range = within(device, address, bytes);
            if (range == null && address >= VIEW_OFFSET) {
                range = within(registered, address - VIEW_OFFSET, bytes);
            }
            if (range == null) {
                throw new IllegalStateException("CUDA_ERROR_ILLEGAL_ADDRESS: kernel access 0x"
                        + Long.toHexString(address) + " + " + bytes);
            }
            return range;
        }

        private static MemorySegment within(TreeMap<Long, MemorySegment> map, long address, long bytes) {
            Map.Entry<Long, MemorySegment> entry = map.floorEntry(address);
            if (entry == null || bytes < 0) {
                return null;
            }
            long offset = address - entry.getKey();
            return offset <= entry.getValue().byteSize() - bytes ? entry.getValue().asSlice(offset, bytes) : null;
        }

        /** An in-order stream run by one thread; the first failure sticks to every later event. */
        private final class EmulatedStream implements Stream {
            private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "emulated-cuda-stream");
                t.setDaemon(true);
                return t;
            });
            private volatile RuntimeException error;
            private final boolean counted = streamsMade.getAndIncrement() < 2;
            /** Destination of the latest host → device copy: a launch reading its table from there counts it. */
            private long lastCopyDestination = -1;

            private void enqueue(Runnable operation) {
                ensureOpen();
                thread.execute(() -> {
                    if (error != null) {
                        return;
                    }
                    long delay = operationDelayNanos;
                    if (delay > 0) {
                        LockSupport.parkNanos(delay);
                    }
                    String injected = injectedFailure;
                    if (injected != null) {
                        injectedFailure = null;
                        error = new IllegalStateException(injected);
                        contextError = error;
                        return;
                    }
                    lock.readLock().lock();
                    try {
                        operation.run();
                    } catch (RuntimeException e) {
                        error = e;
                        contextError = e;
                    } finally {
                        lock.readLock().unlock();
                    }
                });
            }

            @Override
            public void copyToDevice(long dst, long host, long bytes) {
                if (counted) {
                    asyncCopies.incrementAndGet();
                }
                lastCopyDestination = dst;
                enqueue(() -> MemorySegment.copy(pinnedHost(host, bytes), 0, deviceRange(dst, bytes), 0, bytes));
            }

            @Override
            public void copyToHost(long host, long src, long bytes) {
                if (counted) {
                    asyncCopies.incrementAndGet();
                }
                enqueue(() -> MemorySegment.copy(deviceRange(src, bytes), 0, pinnedHost(host, bytes), 0, bytes));
            }

            @Override
            public void copyDeviceToDevice(long dst, long src, long bytes) {
                enqueue(() -> MemorySegment.copy(deviceRange(src, bytes), 0, deviceRange(dst, bytes), 0, bytes));
            }

            @Override
            public void launch(Kernel kernel, long srcTable, long dstTable, long lenTable, int pieces) {
                launches.incrementAndGet();
                if (srcTable == lastCopyDestination) {
                    tableCopies.incrementAndGet();
                }
                enqueue(() -> {
                    MemorySegment src = deviceRange(srcTable, (long) pieces * Long.BYTES);
                    MemorySegment dst = deviceRange(dstTable, (long) pieces * Long.BYTES);
                    MemorySegment len = deviceRange(lenTable, (long) pieces * Long.BYTES);
                    for (int i = 0; i < pieces; i++) {
                        long from = src.getAtIndex(ValueLayout.JAVA_LONG, i);
                        long to = dst.getAtIndex(ValueLayout.JAVA_LONG, i);
                        long bytes = len.getAtIndex(ValueLayout.JAVA_LONG, i);
                        MemorySegment.copy(kernelRange(from, bytes), 0, kernelRange(to, bytes), 0, bytes);
                    }
                });
            }

            @Override
            public Event record() {
                ensureOpen();
                CompletableFuture<Void> reached = new CompletableFuture<>();
                thread.execute(() -> {
                    RuntimeException e = error;
                    if (e == null) {
                        reached.complete(null);
                    } else {
                        reached.completeExceptionally(e);
                    }
                });
                return new Event() {
                    @Override
                    public void await() {
                        try {
                            reached.get();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException("interrupted", e);
                        } catch (ExecutionException e) {
                            throw (RuntimeException) e.getCause();
                        }
                    }

                    @Override
                    public void close() {
                    }
                };
            }

            @Override
            public void synchronize() {
                record().await();
            }

            @Override
            public void close() {
                thread.shutdown();
            }
        }
    }
}

package dev.selene.node.burst;

import dev.selene.actors.pool.ManagerStore;
import dev.selene.actors.pool.PoolBaseline;
import dev.selene.node.Failures;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.NettyDataPlane;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The raw path under the pool's record transfers, measured from the burst's host JVM against the same manager JVMs:
 * raw transfers on the same data plane ({@link PoolBaseline}) carrying the same bytes in slot-sized chunks from
 * off-heap memory into off-heap memory, with no slots, record codec, checksums or directory in the way. A write sends
 * as many copies of its bytes as the pool keeps replicas, spread evenly over the managers, all at once (as
 * retirements stream each record to each of its replicas, placed evenly by key); a read takes an equal share from
 * each manager at once, as the probe's fetches spread over the records' holders. Rates are the bytes (one copy)
 * over the wall time of all the streams together.
 */
final class PoolRaw implements AutoCloseable {

    /** How long the host may take to see every manager's store. */
    static final Duration STORES_TIMEOUT = Duration.ofSeconds(20);

    private final DataPlane plane;
    private final List<DataAddress> stores;
    private final int replicas;
    private final int chunkBytes;
    private long writeBytes;
    private long writeNanos;
    private long readBytes;
    private long readNanos;

    private PoolRaw(DataPlane plane, List<DataAddress> stores, int replicas, int chunkBytes) {
        this.plane = plane;
        this.stores = stores;
        this.replicas = Math.max(1, Math.min(replicas, stores.size()));
        this.chunkBytes = chunkBytes;
    }

    /** Waits until the host's actor system sees {@code managers} stores; streams go in chunks of {@code chunkBytes}. */
    static PoolRaw await(ActorSystem<?> system, int managers, int chunkBytes) throws Exception {
        long deadline = System.nanoTime() + STORES_TIMEOUT.toNanos();
        List<ActorRef<ManagerStore.Command>> stores = PoolBaseline.stores(system);
        while (stores.size() < managers) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the host sees " + stores.size() + " of " + managers
                        + " pool managers' stores after " + STORES_TIMEOUT.toSeconds() + " s");
            }
            Thread.sleep(100);
            stores = PoolBaseline.stores(system);
        }
        // A data plane of its own, like the node's: the same transport and threads, apart from the node's transfers.
        // The same TLS as the node's planes (its certificates, from its system's settings), or plain text.
        DataPlane plane = NettyDataPlane.client(NettyDataPlane.Backend.best(), NettyDataPlane.DEFAULT_SILENCE, 2,
                dev.selene.actors.pool.PoolSecurity.from(system.settings().config()).dataPlane());
        try {
            List<ManagerStore.StoreStatus> statuses = PoolBaseline.statuses(system, stores);
            return new PoolRaw(plane, statuses.stream().map(st -> DataAddress.parse(st.dataAddress())).toList(),
                    statuses.stream().mapToInt(ManagerStore.StoreStatus::replicas).max().orElse(1), chunkBytes);
        } catch (Exception e) {
            plane.close();
            throw e;
        }
    }

    /**
     * One round: {@code bytes} written to every manager at once, then {@code bytes} read, a share from each. A round
     * that fails (a manager went away) counts nothing: the figures stay those of the rounds before it.
     */
    void measure(long bytes) throws Exception {
        if (bytes <= 0) {
            return;
        }
        List<Task> writes = new ArrayList<>();
        long copies = bytes * replicas;
        long each = copies / stores.size();
        for (int i = 0; i < stores.size(); i++) {
            DataAddress s = stores.get(i);
            long b = i == stores.size() - 1 ? copies - each * (stores.size() - 1) : each;
            writes.add(() -> PoolBaseline.send(plane, s, b, chunkBytes));
        }
        long start = System.nanoTime();
        all(writes);
        long wrote = System.nanoTime() - start;
        List<Task> reads = new ArrayList<>();
        long share = bytes / stores.size();
        for (int i = 0; i < stores.size(); i++) {
            DataAddress s = stores.get(i);
            long b = i == stores.size() - 1 ? bytes - share * (stores.size() - 1) : share;
            reads.add(() -> PoolBaseline.receive(plane, s, b, chunkBytes));
        }
        start = System.nanoTime();
        all(reads);
        writeNanos += wrote;
        writeBytes += bytes;
        readNanos += System.nanoTime() - start;
        readBytes += bytes;
    }

    /** A raw round that failed: a transfer of it failed (its manager went away or refused it). */
    static final class RoundFailedException extends IllegalStateException {
        RoundFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A blocking transfer. */
    private interface Task {
        long run() throws Exception;
    }

    private static void all(List<Task> tasks) throws Exception {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Long>> running = new ArrayList<>();
            for (Task t : tasks) {
                running.add(pool.submit(t::run));
            }
            for (Future<Long> f : running) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    throw new RoundFailedException("raw pool transfer failed: " + Failures.message(e),
                            Failures.root(e));
                }
            }
        }
    }

    double writeGbps() {
        return writeNanos > 0 ? writeBytes / (double) writeNanos : 0;
    }

    double readGbps() {
        return readNanos > 0 ? readBytes / (double) readNanos : 0;
    }

    long bytes() {
        return writeBytes;
    }

    /** Bytes written and read so far. */
    long bytesMoved() {
        return writeBytes + readBytes;
    }

    @Override
    public void close() {
        plane.close();
    }
}

package example;

import com.typesafe.config.Config;
import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.Selene;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An application's actor system with the cache in it: publishes a chain of three records from device memory, looks
 * the chain up, restores it into fresh device memory and checks every byte.
 */
public final class EmbeddingExample {

    static final String NAMESPACE = "example";

    /** Runs the example on an actor system configured by {@code config}; returns the records restored intact. */
    public static int run(Config config) {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "example", config);
        try {
            SeleneCache cache = Selene.get(system).cache(); // starts the node; returns once it serves
            DeviceCopier gpu = cache.copier();              // the device copier that selene.device selected
            List<Long> deviceMemory = new ArrayList<>();
            try {
                return publishAndRestore(cache, gpu, deviceMemory);
            } finally {
                deviceMemory.forEach(gpu::freeDevice); // before the copier closes with the system
            }
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().join();
        }
    }

    private static int publishAndRestore(SeleneCache cache, DeviceCopier gpu, List<Long> deviceMemory) {
        Layout layout = cache.layout();
        RecordKey root = new RecordKey(NAMESPACE, 101);
        RecordKey turn1 = new RecordKey(NAMESPACE, 102);
        RecordKey turn2 = new RecordKey(NAMESPACE, 103);
        List<RecordSpec> chain = List.of(
                new RecordSpec(root, null, false),  // page-only: supplies pages, never ends a match
                new RecordSpec(turn1, root, true),  // carries a row: a lookup may end here
                new RecordSpec(turn2, turn1, true));
        long[] hashes = {101, 102, 103};
        for (RecordSpec spec : chain) {
            // In an engine the snapshot is KV memory it already holds; here, bytes derived from the key.
            DevicePlacement snapshot = allocate(gpu, layout, spec.hasRow(), deviceMemory);
            KeyedContent.fillRecord(gpu, layout, snapshot, spec.key(), spec.hasRow());
            PublishResult published = cache.publish(spec, snapshot, Duration.ofSeconds(1))
                    .toCompletableFuture().join();
            if (!(published instanceof PublishResult.Stored)) {
                throw new IllegalStateException(spec.key() + " was not stored: " + published);
            }
        }
        int depth = cache.lookup(NAMESPACE, hashes).toCompletableFuture().join().depth();
        if (depth != chain.size()) {
            throw new IllegalStateException("the lookup matched " + depth + " of " + chain.size() + " records");
        }
        List<DevicePlacement> targets = new ArrayList<>();
        for (RecordSpec spec : chain) {
            targets.add(allocate(gpu, layout, spec.hasRow(), deviceMemory));
        }
        RestoreResult restored = cache.restore(NAMESPACE, hashes, targets, Duration.ofSeconds(1))
                .toCompletableFuture().join();
        if (restored.outcome() != RestoreResult.Outcome.RESTORED) {
            throw new IllegalStateException("not restored: " + restored.outcome() + " " + restored.detail());
        }
        int intact = 0;
        for (int i = 0; i < chain.size(); i++) {
            RecordSpec spec = chain.get(i);
            boolean row = spec.hasRow() && !restored.rowsLeftOut().contains(i); // only the end's row is needed
            if (KeyedContent.verifyRecord(gpu, layout, targets.get(i), spec.key(), row)) {
                intact++;
            }
        }
        return intact;
    }

    /**
     * Publishes {@code spec} from {@code snapshot}, which the engine keeps for 50 ms: the publisher retries every
     * {@code Retry} answer until the lease ends, and then reports the publication abandoned.
     */
    public static PublishOutcome publishWithinLease(SeleneCache cache, RecordSpec spec, DevicePlacement snapshot) {
        SnapshotLease lease = SnapshotLease.until(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
        PublishOutcome outcome = new Publisher(cache).publish(spec, snapshot, lease).toCompletableFuture().join();
        return outcome;
    }

    /** Device memory for one record, laid out as the layout says. */
    private static DevicePlacement allocate(DeviceCopier gpu, Layout layout, boolean hasRow, List<Long> deviceMemory) {
        long base = gpu.allocateDevice(DevicePlacement.bytesNeeded(layout, hasRow));
        deviceMemory.add(base);
        return DevicePlacement.contiguous(layout, base, hasRow);
    }
}

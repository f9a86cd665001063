package dev.selene.actors.pool;

import dev.selene.actors.store.Store;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.OutgoingImage;
import dev.selene.transport.pool.Pushed;
import dev.selene.transport.pool.Transfer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One record retired to the pool: its image pushed on the data plane, straight from its pinned slots, to every store
 * placed for it at once. It counts as written once every push has ended and at least one store has stored it (or
 * held it already); a store that failed is named in the outcome, so that the record is known to be short of
 * replicas and the store can be skipped for a while. The deadline aborts what is still running. The answer comes only
 * after every push has ended, so the slots are never read after it.
 */
final class PoolUpload {

    private PoolUpload() {
    }

    /**
     * How a retirement ended: the write's reply, the stores whose push failed, and those of them that refused it
     * because their manager is stopping.
     */
    record Outcome(Store.WriteReply reply, List<DataAddress> failed, List<DataAddress> stopping) {
    }

    /** Pushes {@code image} of {@code spec} to {@code stores} over {@code data}. */
    static CompletableFuture<Outcome> start(DataPlane data, RecordSpec spec, OutgoingImage image,
                                            List<DataAddress> stores, Duration deadline) {
        RecordKey key = spec.key();
        long start = System.nanoTime();
        List<Transfer<Pushed>> pushes = new ArrayList<>(stores.size());
        for (DataAddress s : stores) {
            pushes.add(data.push(s, spec, image));
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(pushes.stream()
                .map(p -> p.done().handle((v, e) -> v)).toArray(CompletableFuture[]::new));
        TransferDeadlines.unlessDone(all, deadline, () -> pushes.forEach(
                p -> p.abort("no answer from the pool manager within " + deadline.toSeconds() + " s")));
        return all.thenApply(v -> {
            List<DataAddress> failed = new ArrayList<>();
            List<DataAddress> stopping = new ArrayList<>();
            String reason = null;
            for (int i = 0; i < pushes.size(); i++) {
                CompletableFuture<Pushed> d = pushes.get(i).done();
                if (d.isCompletedExceptionally()) {
                    failed.add(stores.get(i));
                    String why = d.handle((x, e) -> String.valueOf(e.getMessage())).join();
                    if (why.contains(ManagerStore.STOPPING)) {
                        stopping.add(stores.get(i));
                    }
                    if (reason == null) {
                        reason = why;
                    }
                }
            }
            Store.WriteReply reply = failed.size() < stores.size()
                    ? new Store.Written(key, image.bytes(), System.nanoTime() - start)
                    : new Store.WriteFailed(key, false, "sending to the pool failed: " + reason);
            return new Outcome(reply, failed, stopping);
        });
    }
}

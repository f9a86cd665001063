package dev.selene.actors.pool;

import dev.selene.actors.store.Store;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.ReceivedImage;
import dev.selene.transport.pool.Transfer;
import dev.selene.transport.pool.TransferFailedException;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One record read back from the pool into staging slots: fetched on the data plane from the first holder, straight
 * into the slots (every checksum verified before it counts as read), and from the next holder when one fails, does
 * not hold it, or goes silent (the data plane fails a transfer that moves no byte for the host's failover deadline;
 * a slow transfer that keeps moving is not failed). The answer comes only after the last fetch has ended, so nothing
 * writes into the staging slots after it.
 */
final class PoolFetch {

    private final DataPlane data;
    private final RecordKey key;
    private final Layout layout;
    private final PieceShares target;
    private final List<DataAddress> holders;
    private final Duration perHolder;
    private final Consumer<DataAddress> onHolderFailed;
    private final CompletableFuture<Store.ReadReply> answer = new CompletableFuture<>();
    private boolean anyFailed;
    /** What each holder tried so far answered, for the reason of a read that fails on all of them. */
    private final List<String> outcomes = new java.util.ArrayList<>();

    private PoolFetch(DataPlane data, RecordKey key, Layout layout, PieceShares target, List<DataAddress> holders,
                      Duration perHolder, Consumer<DataAddress> onHolderFailed) {
        this.onHolderFailed = onHolderFailed;
        this.data = data;
        this.key = key;
        this.layout = layout;
        this.target = target;
        this.holders = holders;
        this.perHolder = perHolder;
    }

    /**
     * Reads {@code key} from {@code holders} (in order) over {@code data} into {@code target}, giving each holder at
     * most {@code perHolder} in all (a safety net: silence fails a transfer much sooner); the answer is
     * {@link Store.ReadDone} or {@link Store.ReadFailed} ({@code fileLost} when no holder had it).
     * {@code onHolderFailed} hears of each holder whose transfer failed (not one that said it does not hold it).
     */
    static CompletableFuture<Store.ReadReply> start(DataPlane data, RecordKey key, Layout layout, PieceShares target,
                                                    List<DataAddress> holders, Duration perHolder,
                                                    Consumer<DataAddress> onHolderFailed) {
        PoolFetch f = new PoolFetch(data, key, layout, target, holders, perHolder, onHolderFailed);
        f.attempt(0);
        return f.answer;
    }

    private void attempt(int index) {
        if (index >= holders.size()) {
            answer.complete(new Store.ReadFailed(key, !anyFailed, !anyFailed ? "no pool manager holds it"
                    : "every pool manager that may hold it failed: " + String.join("; ", outcomes)));
            return;
        }
        Transfer<ReceivedImage> fetch = data.fetch(holders.get(index), key, layout, target);
        TransferDeadlines.unlessDone(fetch.done(), perHolder, () -> fetch.abort(
                "no complete record from the pool manager within " + perHolder.toMillis() + " ms"));
        fetch.done().whenComplete((image, failure) -> {
            if (failure == null) {
                answer.complete(new Store.ReadDone(key, image.bytes()));
                return;
            }
            Throwable cause = failure instanceof java.util.concurrent.CompletionException c ? c.getCause() : failure;
            boolean notHeld = cause instanceof TransferFailedException t && t.notHeld();
            anyFailed |= !notHeld;
            if (!notHeld) {
                onHolderFailed.accept(holders.get(index));
            }
            outcomes.add(holders.get(index) + (notHeld ? " does not hold it" : ": " + cause.getMessage()));
            attempt(index + 1);
        });
    }
}

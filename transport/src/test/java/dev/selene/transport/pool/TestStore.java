package dev.selene.transport.pool;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The store behind a serving data plane in the contract tests: it lands every offered record in fresh test memory
 * and keeps it when it arrives verified, serves what it keeps, and tells the tests how each landing and sending
 * ended.
 */
final class TestStore implements RecordService {

    /** A record this store keeps: its memory and its image's header and footer blocks. */
    record Kept(ImageShares shares, ReceivedImage image) {
    }

    final Map<RecordKey, Kept> kept = new ConcurrentHashMap<>();
    final Map<RecordKey, CompletableFuture<ReceivedImage>> landed = new ConcurrentHashMap<>();
    final Map<RecordKey, CompletableFuture<Long>> sent = new ConcurrentHashMap<>();
    private final Layout layout;
    private final Map<RecordKey, ImageShares> allocated = new ConcurrentHashMap<>();
    volatile String refusing;

    TestStore(Layout layout) {
        this.layout = layout;
    }

    @Override
    public void offered(RecordSpec spec, long imageBytes, Admission admission) {
        RecordKey key = spec.key();
        if (refusing != null) {
            admission.refuse(refusing);
            return;
        }
        if (kept.containsKey(key)) {
            admission.alreadyHeld();
            return;
        }
        ImageShares target = allocated.computeIfAbsent(key, k -> new ImageShares(layout, spec.hasRow()));
        CompletableFuture<ReceivedImage> outcome = landed.computeIfAbsent(key, k -> new CompletableFuture<>());
        admission.land(layout, target, (image, failure) -> {
            if (failure != null) {
                outcome.completeExceptionally(failure);
            } else {
                kept.put(key, new Kept(target, image));
                outcome.complete(image);
            }
        });
    }

    @Override
    public void requested(RecordKey key, Delivery delivery) {
        Kept k = kept.get(key);
        if (k == null) {
            delivery.notHeld("this store does not hold " + key);
            return;
        }
        CompletableFuture<Long> outcome = sent.computeIfAbsent(key, x -> new CompletableFuture<>());
        delivery.send(new OutgoingImage(layout, k.image().header().spec().hasRow(), k.image().headerBlock(),
                k.image().footerBlock(), k.shares()), (bytes, failure) -> {
                    if (failure != null) {
                        outcome.completeExceptionally(failure);
                    } else {
                        outcome.complete(bytes);
                    }
                });
    }

    CompletableFuture<ReceivedImage> landing(RecordKey key) {
        return landed.computeIfAbsent(key, k -> new CompletableFuture<>());
    }

    void close() {
        allocated.values().forEach(ImageShares::close);
    }
}

package dev.selene.node.workload;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The timed part of a run: every conversation publishes its records turn by turn from snapshots that live only the
 * settings' {@code snapshotMillis}, as many conversations at once as the settings' concurrency.
 */
public final class PublishPhase {

    /** Told when the publications start and when the last has been answered (how a harness measures around them). */
    public interface Watch {
        /** Does nothing. */
        Watch NONE = new Watch() {
            @Override
            public void started() {
            }

            @Override
            public void ended(long elapsedNanos) {
            }
        };

        /** Right before the first publication. */
        void started();

        /** Right after the last answer, {@code elapsedNanos} after {@link #started()}. */
        void ended(long elapsedNanos);
    }

    private PublishPhase() {
    }

    /**
     * Publishes every conversation of {@code conversations} (prefilled) to {@code cache} and returns the tally, with
     * a progress line on {@code progressOut} when the settings ask for one.
     */
    public static PublishTally run(SeleneCache cache, Conversations conversations, PrintStream progressOut,
                                   Watch watch) throws InterruptedException {
        WorkloadSettings settings = conversations.settings();
        Publisher publisher = new Publisher(cache);
        Semaphore inFlight = new Semaphore(settings.concurrency());
        ConcurrentLinkedQueue<PublishOutcome> outcomes = new ConcurrentLinkedQueue<>();
        AtomicLong published = new AtomicLong();
        List<CompletableFuture<Void>> all = new ArrayList<>(conversations.size());
        Progress progress = new Progress(settings.progress() ? progressOut : null, "burst", () -> published.get()
                + " records published, " + outcomes.stream().filter(PublishOutcome::abandoned).count() + " abandoned");
        long start = System.nanoTime();
        watch.started();
        try {
            for (Conversation conv : conversations.list()) {
                inFlight.acquire();
                CompletableFuture<Void> done = publishTurns(publisher, settings, conv, 0, outcomes, published);
                done.whenComplete((v, e) -> inFlight.release());
                all.add(done);
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        } finally {
            progress.stop();
        }
        long elapsed = System.nanoTime() - start;
        watch.ended(elapsed);
        return PublishTally.of(outcomes, elapsed);
    }

    /** Publishes the records of the turn from {@code first} at once, then the next turn, as a conversation grows. */
    private static CompletableFuture<Void> publishTurns(Publisher publisher, WorkloadSettings settings,
                                                        Conversation conv, int first,
                                                        ConcurrentLinkedQueue<PublishOutcome> outcomes,
                                                        AtomicLong published) {
        if (first >= conv.specs.length) {
            return CompletableFuture.completedFuture(null);
        }
        int end = first;
        while (end < conv.specs.length && !conv.specs[end].hasRow()) {
            end++;
        }
        end = Math.min(end + 1, conv.specs.length);
        SnapshotLease lease = SnapshotLease.until(System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(settings.snapshotMillis()));
        List<CompletableFuture<PublishOutcome>> turn = new ArrayList<>();
        for (int i = first; i < end; i++) {
            turn.add(publisher.publish(conv.specs[i], conv.snapshots[i], lease).toCompletableFuture()
                    .whenComplete((o, e) -> {
                        if (o != null) {
                            outcomes.add(o);
                            published.incrementAndGet();
                        }
                    }));
        }
        int next = end;
        return CompletableFuture.allOf(turn.toArray(CompletableFuture[]::new))
                .thenCompose(v -> publishTurns(publisher, settings, conv, next, outcomes, published));
    }
}

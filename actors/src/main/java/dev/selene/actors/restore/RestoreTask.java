package dev.selene.actors.restore;

import dev.selene.actors.api.RestoreResult;
import dev.selene.actors.memory.MemoryTier;
import dev.selene.actors.record.RecordContext;
import dev.selene.engine.key.RecordKey;
import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.CopyPlans;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One restore: pin the match in host memory, copy every matched record to its device placement at once,
 * unpin, answer. Pins keep the records' slots from being dropped while the copies read them.
 */
public final class RestoreTask {

    /** The protocol (internal). */
    public sealed interface Command {
    }

    private record PinnedReply(MemoryTier.Pinned pinned) implements Command {
    }

    private record CopiesFinished(Throwable failure) implements Command {
    }

    private RestoreTask() {
    }

    /** Restores the match of {@code chain} to {@code targets} (one device placement per chain record). */
    public static Behavior<Command> create(RecordContext records, ActorRef<MemoryTier.Command> tier, String namespace,
                                           long[] chain, List<DevicePlacement> targets,
                                           ActorRef<RestoreResult> replyTo) {
        return Behaviors.setup(ctx -> {
            ActorRef<MemoryTier.Pinned> adapter = ctx.messageAdapter(MemoryTier.Pinned.class, PinnedReply::new);
            tier.tell(new MemoryTier.PinMatch(namespace, chain, adapter));
            return Behaviors.receive(Command.class)
                    .onMessage(PinnedReply.class, p -> onPinned(ctx, records, tier, p.pinned(), targets, replyTo))
                    .build();
        });
    }

    private static Behavior<Command> onPinned(ActorContext<Command> ctx, RecordContext records,
                                              ActorRef<MemoryTier.Command> tier, MemoryTier.Pinned pinned,
                                              List<DevicePlacement> targets, ActorRef<RestoreResult> replyTo) {
        List<MemoryTier.PinnedRecord> recs = pinned.records();
        if (recs.isEmpty()) {
            records.counters().increment("restore.miss");
            replyTo.tell(RestoreResult.of(RestoreResult.Outcome.MISS, ""));
            return Behaviors.stopped();
        }
        List<RecordKey> keys = recs.stream().map(r -> r.spec().key()).toList();
        List<CompletableFuture<Void>> copies = new ArrayList<>(recs.size());
        long bytes = 0;
        try {
            if (targets.size() < recs.size()) {
                throw new IllegalArgumentException("restore of " + recs.size() + " records got only " + targets.size()
                        + " device placements");
            }
            for (int i = 0; i < recs.size(); i++) {
                MemoryTier.PinnedRecord r = recs.get(i);
                CopyPlan plan = CopyPlans.forRecord(records.layout(), records.host(), r.slots(), targets.get(i),
                        r.spec().hasRow());
                bytes += plan.totalBytes();
                records.traces().append(r.spec().key(), "RestoreTask", "Copy H2D started");
                copies.add(records.copier().copyToDevice(plan));
            }
        } catch (RuntimeException e) {
            return finish(records, tier, keys, CompletableFuture.allOf(
                    copies.toArray(CompletableFuture[]::new)), ctx, replyTo, recs.size(), 0, e);
        }
        return finish(records, tier, keys, CompletableFuture.allOf(copies.toArray(CompletableFuture[]::new)), ctx,
                replyTo, recs.size(), bytes, null);
    }

    private static Behavior<Command> finish(RecordContext records, ActorRef<MemoryTier.Command> tier,
                                            List<RecordKey> keys, CompletableFuture<Void> all,
                                            ActorContext<Command> ctx, ActorRef<RestoreResult> replyTo, int depth,
                                            long bytes, Throwable planFailure) {
        // Unpin only once every started copy has finished reading the slots, even when planning failed.
        ctx.pipeToSelf(all, (v, failure) -> new CopiesFinished(planFailure != null ? planFailure : failure));
        return Behaviors.receive(Command.class)
                .onMessage(CopiesFinished.class, f -> {
                    tier.tell(new MemoryTier.Unpin(keys));
                    if (f.failure() != null) {
                        records.counters().increment("restore.failed");
                        replyTo.tell(RestoreResult.of(RestoreResult.Outcome.FAILED, String.valueOf(
                                f.failure().getMessage())));
                    } else {
                        records.counters().increment("restore.memory");
                        records.counters().add("restore.bytes", bytes);
                        for (RecordKey k : keys) {
                            records.traces().append(k, "RestoreTask", "Copy H2D done");
                        }
                        long tokens = (long) depth * records.layout().tokensPerRecord();
                        replyTo.tell(new RestoreResult(RestoreResult.Outcome.RESTORED, depth, tokens, depth, 0, 0,
                                bytes, ""));
                    }
                    return Behaviors.stopped();
                })
                .build();
    }
}

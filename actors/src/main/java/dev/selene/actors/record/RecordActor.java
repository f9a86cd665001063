package dev.selene.actors.record;

import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.RetryReason;
import dev.selene.actors.memory.MemoryTier;
import dev.selene.actors.slots.SlotPool;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.CopyPlan;
import dev.selene.transport.gpu.CopyPlans;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.util.concurrent.CompletableFuture;

/**
 * One in-flight publication: allocate its slots, copy it from the GPU snapshot, hand it to the memory tier.
 * It stops when the record is at rest in the tier's index, or when the publication ends without it.
 *
 * <p>The slots stay leased until the copy has completed, whatever happens to the actor: the memory tier learns
 * the lease and the copy's completion before anything can fail.
 */
public final class RecordActor {

    /** The protocol (all internal: the actor drives itself from replies and copy completions). */
    public sealed interface Command {
    }

    private record SlotsReply(SlotPool.AllocateReply reply) implements Command {
    }

    private record CopyFinished(Throwable failure) implements Command {
    }

    private RecordActor() {
    }

    /** The behaviour of a publication of {@code spec} from {@code snapshot}. */
    public static Behavior<Command> publish(RecordContext records, RecordSpec spec, DevicePlacement snapshot,
                                            ActorRef<PublishResult> replyTo, ActorRef<MemoryTier.Command> tier) {
        return Behaviors.setup(ctx -> {
            RecordKey key = spec.key();
            int slots = spec.slots(records.layout());
            records.traces().append(key, "RecordActor", "Publish: allocate " + slots + " slots");
            ActorRef<SlotPool.AllocateReply> adapter = ctx.messageAdapter(SlotPool.AllocateReply.class,
                    SlotsReply::new);
            records.slotPool().tell(new SlotPool.Allocate(key, slots, Purpose.PUBLISH, adapter));
            return allocating(ctx, records, spec, snapshot, replyTo, tier);
        });
    }

    private static Behavior<Command> allocating(ActorContext<Command> ctx, RecordContext records, RecordSpec spec,
                                                DevicePlacement snapshot, ActorRef<PublishResult> replyTo,
                                                ActorRef<MemoryTier.Command> tier) {
        RecordKey key = spec.key();
        return Behaviors.receive(Command.class)
                .onMessage(SlotsReply.class, r -> switch (r.reply()) {
                    case SlotPool.Allocated a -> startCopy(ctx, records, spec, snapshot, a.slots(), replyTo, tier);
                    case SlotPool.Short s -> {
                        tier.tell(new MemoryTier.RecordEnded(key));
                        records.reply(replyTo, new PublishResult.Retry(RetryReason.NO_SPACE));
                        yield Behaviors.stopped();
                    }
                    case SlotPool.Oversize o -> {
                        tier.tell(new MemoryTier.RecordEnded(key));
                        records.reply(replyTo, new PublishResult.Oversize(o.slots(), o.maxSlots()));
                        yield Behaviors.stopped();
                    }
                })
                .build();
    }

    private static Behavior<Command> startCopy(ActorContext<Command> ctx, RecordContext records, RecordSpec spec,
                                               DevicePlacement snapshot, SlotList slots,
                                               ActorRef<PublishResult> replyTo, ActorRef<MemoryTier.Command> tier) {
        RecordKey key = spec.key();
        // The lease is known to the tier before anything can fail, so that a crash of this actor frees the slots.
        tier.tell(new MemoryTier.RecordLeased(key, slots, null));
        CompletableFuture<Void> copy;
        long bytes;
        try {
            CopyPlan plan = CopyPlans.forRecord(records.layout(), records.host(), slots, snapshot, spec.hasRow());
            bytes = plan.totalBytes();
            copy = records.copier().copyToHost(plan);
        } catch (RuntimeException e) {
            return fail(records, key, slots, replyTo, tier, "bad_snapshot", e);
        }
        records.traces().append(key, "RecordActor", "Copy D2H started: " + bytes + " bytes");
        tier.tell(new MemoryTier.RecordLeased(key, slots, copy));
        ctx.pipeToSelf(copy, (v, failure) -> new CopyFinished(failure));
        return Behaviors.receive(Command.class)
                .onMessage(CopyFinished.class, f -> {
                    if (f.failure() != null) {
                        return fail(records, key, slots, replyTo, tier, "copy_failed", f.failure());
                    }
                    records.traces().append(key, "RecordActor", "Copy D2H done");
                    tier.tell(new MemoryTier.RecordResident(spec, slots, bytes, replyTo));
                    return Behaviors.stopped();
                })
                .build();
    }

    private static Behavior<Command> fail(RecordContext records, RecordKey key, SlotList slots,
                                          ActorRef<PublishResult> replyTo, ActorRef<MemoryTier.Command> tier,
                                          String reason, Throwable cause) {
        records.slotPool().tell(new SlotPool.Release(slots, false));
        tier.tell(new MemoryTier.RecordEnded(key));
        records.traces().append(key, "RecordActor", "Failed (" + reason + "): " + cause.getMessage());
        records.reply(replyTo, new PublishResult.Failed(reason, String.valueOf(cause.getMessage())));
        return Behaviors.stopped();
    }
}

package dev.selene.actors.cache;

import dev.selene.actors.pool.ManagerStore;
import dev.selene.actors.pool.PoolEntry;
import dev.selene.engine.key.RecordKey;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.OutgoingImage;
import dev.selene.transport.pool.Transfer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One record retired to the pool: offer it to every store the directory placed it on, push its image to each on the
 * data plane (straight from its pinned slots), and answer once every store has stored it, or once one refused, or
 * after the deadline. It answers only after its transfers have ended, so the slots are never read after the answer.
 */
final class PoolUpload {

    /** The protocol (internal). */
    sealed interface Command {
    }

    private record Answered(ManagerStore.OfferReply reply) implements Command {
    }

    private record StreamEnded(Throwable failure) implements Command {
    }

    /** A store the record was offered to stopped (its node left or was downed). */
    private record StoreGone(ActorRef<ManagerStore.Command> store) implements Command {
    }

    private enum Deadline implements Command {
        INSTANCE
    }

    private PoolUpload() {
    }

    /** Uploads {@code entry}, whose image is {@code image}, to {@code stores} over {@code data}; answers {@code replyTo}. */
    static Behavior<Command> create(PoolEntry entry, OutgoingImage image, DataPlane data,
                                    List<ActorRef<ManagerStore.Command>> stores, Duration deadline,
                                    ActorRef<Store.WriteReply> replyTo) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startSingleTimer(Deadline.INSTANCE, deadline);
            ActorRef<ManagerStore.OfferReply> answers = ctx.messageAdapter(ManagerStore.OfferReply.class,
                    Answered::new);
            for (ActorRef<ManagerStore.Command> s : stores) {
                // A store that dies before it has stored the record ends the upload when its node is downed, not
                // at the deadline: an offer it never answered would otherwise pin the record's slots that long.
                ctx.watchWith(s, new StoreGone(s));
                s.tell(new ManagerStore.Offer(entry, answers));
            }
            return new Run(ctx, entry, image, data, stores.size(), replyTo, System.nanoTime()).waiting();
        }));
    }

    /** The upload's state. */
    private static final class Run {
        private final ActorContext<Command> ctx;
        private final PoolEntry entry;
        private final OutgoingImage image;
        private final DataPlane data;
        private final int required;
        private final ActorRef<Store.WriteReply> replyTo;
        private final long startNanos;
        private final Set<String> stored = new HashSet<>();
        private final List<Transfer<Long>> transfers = new ArrayList<>();
        private String failure;

        Run(ActorContext<Command> ctx, PoolEntry entry, OutgoingImage image, DataPlane data, int required,
            ActorRef<Store.WriteReply> replyTo, long startNanos) {
            this.ctx = ctx;
            this.entry = entry;
            this.image = image;
            this.data = data;
            this.required = required;
            this.replyTo = replyTo;
            this.startNanos = startNanos;
        }

        RecordKey key() {
            return entry.key();
        }

        Behavior<Command> waiting() {
            return Behaviors.receive(Command.class)
                    .onMessage(Answered.class, a -> onAnswer(a.reply()))
                    .onMessage(StreamEnded.class, e -> {
                        if (e.failure() != null && failure == null) {
                            failure = "sending to a pool manager failed: " + e.failure().getMessage();
                        }
                        return failure != null ? finish() : Behaviors.same();
                    })
                    .onMessage(Deadline.class, d -> {
                        if (failure == null) {
                            failure = "no answer from the pool within the deadline (" + stored.size() + " of "
                                    + required + " stores stored it)";
                        }
                        return finish();
                    })
                    .onMessage(StoreGone.class, g -> {
                        if (stored.contains(g.store().path().address().toString())) {
                            return Behaviors.same();
                        }
                        failure = "pool manager " + g.store().path().address() + " left before it stored the record";
                        return finish();
                    })
                    .build();
        }

        private Behavior<Command> onAnswer(ManagerStore.OfferReply reply) {
            switch (reply) {
                case ManagerStore.Accept a -> {
                    Transfer<Long> push;
                    try {
                        push = data.push(DataAddress.parse(a.dataAddress()), a.handle(), image);
                    } catch (RuntimeException e) {
                        failure = "could not send to pool manager at " + a.dataAddress() + ": " + e.getMessage();
                        return finish();
                    }
                    transfers.add(push);
                    ctx.pipeToSelf(push.done(), (v, e) -> new StreamEnded(e));
                }
                case ManagerStore.Stored s -> {
                    stored.add(s.store().path().address().toString());
                    if (stored.size() >= required) {
                        return finish();
                    }
                }
                case ManagerStore.Refused r -> {
                    failure = "a pool manager refused it: " + r.reason();
                    return finish();
                }
            }
            return Behaviors.same();
        }

        /** Stops the transfers still running, waits for them to end, then answers and stops. */
        private Behavior<Command> finish() {
            if (failure != null) {
                transfers.forEach(t -> t.abort(failure));
            }
            CompletableFuture<Void> all = CompletableFuture.allOf(transfers.stream().map(Transfer::done)
                    .toArray(CompletableFuture[]::new)).exceptionally(e -> null);
            ctx.pipeToSelf(all, (v, e) -> Deadline.INSTANCE);
            return Behaviors.receive(Command.class)
                    .onMessage(Deadline.class, d -> {
                        if (!all.isDone()) {
                            return Behaviors.same(); // the overall deadline fired first; the transfers end next
                        }
                        replyTo.tell(failure == null
                                ? new Store.Written(key(), entry.imageBytes(), System.nanoTime() - startNanos)
                                : new Store.WriteFailed(key(), false, failure));
                        return Behaviors.stopped();
                    })
                    .onMessage(Answered.class, a -> Behaviors.same())
                    .onMessage(StreamEnded.class, e -> Behaviors.same())
                    .onMessage(StoreGone.class, g -> Behaviors.same())
                    .build();
        }
    }
}

package dev.selene.actors.cache;

import dev.selene.actors.pool.ManagerStore;
import dev.selene.actors.pool.PoolEntry;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.pool.RecordImage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One record retired to the pool: offer it to every store the directory placed it on, stream its image to each
 * (slot-sized chunks copied out of its pinned slots as each stream asks for them), and answer once every store
 * has stored it, or once one refused, or after the deadline. It answers only after its streams have ended, so the
 * slots are never read after the answer.
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

    /** Uploads {@code entry}, whose chunks {@code chunk} produces, to {@code stores}; answers {@code done}. */
    static Behavior<Command> create(PoolEntry entry, Layout layout, RecordImage.Frame frame,
                                    PieceShares source,
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
            return new Run(ctx, entry, layout, frame, source, stores.size(), replyTo, System.nanoTime()).waiting();
        }));
    }

    /** The upload's state. */
    private static final class Run {
        private final ActorContext<Command> ctx;
        private final PoolEntry entry;
        private final Layout layout;
        private final RecordImage.Frame frame;
        private final PieceShares source;
        private final int required;
        private final ActorRef<Store.WriteReply> replyTo;
        private final long startNanos;
        private final SharedKillSwitch kill = KillSwitches.shared("pool-upload");
        private final Materializer materializer;
        private final Set<String> stored = new HashSet<>();
        private final List<CompletableFuture<Done>> streams = new ArrayList<>();
        private String failure;

        Run(ActorContext<Command> ctx, PoolEntry entry, Layout layout, RecordImage.Frame frame,
            PieceShares source, int required, ActorRef<Store.WriteReply> replyTo,
            long startNanos) {
            this.ctx = ctx;
            this.entry = entry;
            this.layout = layout;
            this.frame = frame;
            this.source = source;
            this.required = required;
            this.replyTo = replyTo;
            this.startNanos = startNanos;
            this.materializer = Materializer.createMaterializer(ctx);
        }

        RecordKey key() {
            return entry.key();
        }

        Behavior<Command> waiting() {
            return Behaviors.receive(Command.class)
                    .onMessage(Answered.class, a -> onAnswer(a.reply()))
                    .onMessage(StreamEnded.class, e -> {
                        if (e.failure() != null && failure == null) {
                            failure = "a stream to a pool manager failed: " + e.failure().getMessage();
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
                    boolean hasRow = entry.hasRow();
                    int count = RecordImage.chunkCount(layout, hasRow);
                    CompletionStage<Done> done = Source.range(0, count - 1)
                            .map(i -> ByteString.fromArrayUnsafe(RecordImage.chunk(layout, hasRow,
                                    frame.headerBlock(), frame.footerBlock(), source, i)))
                            .via(kill.flow())
                            .watchTermination((mat, d) -> d)
                            .to(a.sink().getSink())
                            .run(materializer);
                    streams.add(done.toCompletableFuture());
                    ctx.pipeToSelf(done, (v, e) -> new StreamEnded(e));
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

        /** Stops the streams still running, waits for them to end, then answers and stops. */
        private Behavior<Command> finish() {
            if (failure != null) {
                kill.abort(new IllegalStateException(failure));
            }
            CompletableFuture<Void> all = CompletableFuture.allOf(streams.toArray(CompletableFuture[]::new))
                    .exceptionally(e -> null);
            ctx.pipeToSelf(all, (v, e) -> Deadline.INSTANCE);
            return Behaviors.receive(Command.class)
                    .onMessage(Deadline.class, d -> {
                        if (!all.isDone()) {
                            return Behaviors.same(); // the overall deadline fired first; the streams end next
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

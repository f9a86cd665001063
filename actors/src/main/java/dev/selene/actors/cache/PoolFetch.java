package dev.selene.actors.cache;

import dev.selene.actors.pool.ManagerStore;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.codec.RecordFormatException;
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
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.util.ByteString;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * One record read back from the pool into staging slots: fetch it from the first store that holds it, stream its
 * image into the slots through the record codec's reader (every checksum verified before the record counts as
 * read), and fall back to the next holder when a store fails or no longer holds it. It answers only after its
 * stream has ended, so nothing writes into the staging slots after the answer.
 */
final class PoolFetch {

    /** The protocol (internal). */
    sealed interface Command {
    }

    private record Answered(ManagerStore.FetchReply reply, Throwable failure) implements Command {
    }

    private record StreamEnded(Throwable failure) implements Command {
    }

    private enum Deadline implements Command {
        INSTANCE
    }

    private PoolFetch() {
    }

    /**
     * Reads {@code key} from {@code holders} (in order) into {@code target}, the staging slots starting at
     * {@code firstSlot}; tells {@code store} how it ended ({@link PoolStore.FetchEnded} with {@link Store.ReadDone}
     * or {@link Store.ReadFailed}, {@code fileLost} when no holder had it).
     */
    static Behavior<Command> create(RecordKey key, Layout layout, PieceShares target,
                                    List<ActorRef<ManagerStore.Command>> holders, Duration deadline,
                                    ActorRef<Store.Command> store, int firstSlot) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startSingleTimer(Deadline.INSTANCE, deadline);
            return new Run(ctx, key, layout, target, holders, store, firstSlot).next();
        }));
    }

    /** The fetch's state. */
    private static final class Run {
        private final ActorContext<Command> ctx;
        private final RecordKey key;
        private final Layout layout;
        private final PieceShares target;
        private final List<ActorRef<ManagerStore.Command>> holders;
        private final ActorRef<Store.Command> store;
        private final int firstSlot;
        private final Materializer materializer;
        private int tried;
        private boolean anyFailed;
        private String lastFailure = "no pool manager holds it";
        private RecordImage.Reader reader;
        private UniqueKillSwitch kill;
        private long bytes;

        Run(ActorContext<Command> ctx, RecordKey key, Layout layout, PieceShares target,
            List<ActorRef<ManagerStore.Command>> holders, ActorRef<Store.Command> store, int firstSlot) {
            this.ctx = ctx;
            this.key = key;
            this.layout = layout;
            this.target = target;
            this.holders = holders;
            this.store = store;
            this.firstSlot = firstSlot;
            this.materializer = Materializer.createMaterializer(ctx);
        }

        private void answer(Store.ReadReply reply) {
            store.tell(new PoolStore.FetchEnded(firstSlot, reply));
        }

        /** Asks the next holder, or gives up when none is left. */
        Behavior<Command> next() {
            if (tried >= holders.size()) {
                answer(new Store.ReadFailed(key, !anyFailed, lastFailure));
                return Behaviors.stopped();
            }
            ActorRef<ManagerStore.Command> holder = holders.get(tried++);
            ctx.ask(ManagerStore.FetchReply.class, holder, Duration.ofSeconds(5),
                    r -> new ManagerStore.Fetch(key, r), Answered::new);
            return Behaviors.receive(Command.class)
                    .onMessage(Answered.class, this::onAnswer)
                    .onMessage(Deadline.class, d -> {
                        answer(new Store.ReadFailed(key, false, "no answer from the pool in time"));
                        return Behaviors.stopped();
                    })
                    .onMessage(StreamEnded.class, e -> Behaviors.same())
                    .build();
        }

        private Behavior<Command> onAnswer(Answered a) {
            if (a.failure() != null) {
                anyFailed = true;
                lastFailure = "a pool manager did not answer: " + a.failure().getMessage();
                return next();
            }
            switch (a.reply()) {
                case ManagerStore.NotHeld n -> {
                    lastFailure = "no pool manager holds it";
                    return next();
                }
                case ManagerStore.Serve s -> {
                    reader = new RecordImage.Reader(layout, key, target);
                    bytes = s.entry().imageBytes();
                    RecordImage.Reader r = reader;
                    Pair<UniqueKillSwitch, CompletionStage<Done>> run = s.source().getSource()
                            .viaMat(KillSwitches.single(), Keep.right())
                            .toMat(Sink.foreach((ByteString chunk) -> r.accept(chunk.toArrayUnsafe())), Keep.both())
                            .run(materializer);
                    kill = run.first();
                    ctx.pipeToSelf(run.second(), (v, e) -> new StreamEnded(e));
                    return streaming();
                }
            }
        }

        private Behavior<Command> streaming() {
            return Behaviors.receive(Command.class)
                    .onMessage(StreamEnded.class, e -> {
                        Throwable failure = e.failure();
                        if (failure == null) {
                            try {
                                reader.finish();
                                answer(new Store.ReadDone(key, bytes));
                                return Behaviors.stopped();
                            } catch (RecordFormatException ex) {
                                failure = ex;
                            }
                        }
                        anyFailed = true;
                        lastFailure = "the stream from a pool manager failed: " + failure.getMessage();
                        return next();
                    })
                    .onMessage(Deadline.class, d -> {
                        kill.abort(new IllegalStateException("no complete record from the pool in time"));
                        return Behaviors.same(); // the stream ends next, and the answer follows
                    })
                    .onMessage(Answered.class, a -> Behaviors.same())
                    .build();
        }
    }
}

package dev.selene.actors.cache;

import dev.selene.actors.pool.ManagerStore;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.ReceivedImage;
import dev.selene.transport.pool.Transfer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

import java.time.Duration;
import java.util.List;

/**
 * One record read back from the pool into staging slots: ask the first store that holds it for a handle, fetch the
 * image under it on the data plane straight into the slots (every checksum verified before the record counts as
 * read), and fall back to the next holder when a store fails, no longer holds it, or runs out of its own deadline.
 * It answers only after its transfer has ended, so nothing writes into the staging slots after the answer.
 */
final class PoolFetch {

    /** The protocol (internal). */
    sealed interface Command {
    }

    private record Answered(int attempt, ManagerStore.FetchReply reply, Throwable failure) implements Command {
    }

    private record TransferEnded(int attempt, ReceivedImage image, Throwable failure) implements Command {
    }

    /** The deadline of one holder's attempt. */
    private record AttemptDeadline(int attempt) implements Command {
    }

    /** How long a holder may take to answer that it holds the record. */
    static final Duration ASK_TIMEOUT = Duration.ofSeconds(5);

    private PoolFetch() {
    }

    /**
     * Reads {@code key} from {@code holders} (in order) over {@code data} into {@code target}, the staging slots
     * starting at {@code firstSlot}, giving each holder {@code perHolder}; tells {@code store} how it ended
     * ({@link PoolStore.FetchEnded} with {@link Store.ReadDone} or {@link Store.ReadFailed}, {@code fileLost} when
     * no holder had it).
     */
    static Behavior<Command> create(RecordKey key, Layout layout, PieceShares target, DataPlane data,
                                    List<ActorRef<ManagerStore.Command>> holders, Duration perHolder,
                                    ActorRef<Store.Command> store, int firstSlot) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers ->
                new Run(ctx, timers, key, layout, target, data, holders, perHolder, store, firstSlot).next()));
    }

    /** The fetch's state. */
    private static final class Run {
        private final ActorContext<Command> ctx;
        private final TimerScheduler<Command> timers;
        private final RecordKey key;
        private final Layout layout;
        private final PieceShares target;
        private final DataPlane data;
        private final List<ActorRef<ManagerStore.Command>> holders;
        private final Duration perHolder;
        private final ActorRef<Store.Command> store;
        private final int firstSlot;
        private int tried;
        private boolean anyFailed;
        private String lastFailure = "no pool manager holds it";
        private Transfer<ReceivedImage> transfer;

        Run(ActorContext<Command> ctx, TimerScheduler<Command> timers, RecordKey key, Layout layout,
            PieceShares target, DataPlane data, List<ActorRef<ManagerStore.Command>> holders, Duration perHolder,
            ActorRef<Store.Command> store, int firstSlot) {
            this.ctx = ctx;
            this.timers = timers;
            this.key = key;
            this.layout = layout;
            this.target = target;
            this.data = data;
            this.holders = holders;
            this.perHolder = perHolder;
            this.store = store;
            this.firstSlot = firstSlot;
        }

        private Behavior<Command> answer(Store.ReadReply reply) {
            store.tell(new PoolStore.FetchEnded(firstSlot, reply));
            return Behaviors.stopped();
        }

        /** Asks the next holder, or gives up when none is left. */
        Behavior<Command> next() {
            transfer = null;
            if (tried >= holders.size()) {
                return answer(new Store.ReadFailed(key, !anyFailed, lastFailure));
            }
            int attempt = ++tried;
            ActorRef<ManagerStore.Command> holder = holders.get(attempt - 1);
            timers.startSingleTimer(AttemptDeadline.class, new AttemptDeadline(attempt), perHolder);
            ctx.ask(ManagerStore.FetchReply.class, holder, ASK_TIMEOUT.compareTo(perHolder) < 0 ? ASK_TIMEOUT
                    : perHolder, r -> new ManagerStore.Fetch(key, r), (r, f) -> new Answered(attempt, r, f));
            return Behaviors.receive(Command.class)
                    .onMessage(Answered.class, a -> a.attempt() == tried ? onAnswer(a) : Behaviors.same())
                    .onMessage(AttemptDeadline.class, d -> {
                        if (d.attempt() != tried) {
                            return Behaviors.same();
                        }
                        anyFailed = true;
                        lastFailure = "a pool manager did not answer within " + perHolder.toMillis() + " ms";
                        return next();
                    })
                    .onMessage(TransferEnded.class, e -> Behaviors.same())
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
                    int attempt = a.attempt();
                    try {
                        transfer = data.fetch(DataAddress.parse(s.dataAddress()), s.handle(), layout, key, target);
                    } catch (RuntimeException e) {
                        anyFailed = true;
                        lastFailure = "could not fetch from " + s.dataAddress() + ": " + e.getMessage();
                        return next();
                    }
                    ctx.pipeToSelf(transfer.done(), (image, failure) -> new TransferEnded(attempt, image, failure));
                    return fetching();
                }
            }
        }

        private Behavior<Command> fetching() {
            return Behaviors.receive(Command.class)
                    .onMessage(TransferEnded.class, e -> {
                        if (e.attempt() != tried) {
                            return Behaviors.same();
                        }
                        timers.cancel(AttemptDeadline.class);
                        if (e.failure() == null) {
                            return answer(new Store.ReadDone(key, e.image().bytes()));
                        }
                        anyFailed = true;
                        lastFailure = "the transfer from a pool manager failed: " + e.failure().getMessage();
                        return next();
                    })
                    .onMessage(AttemptDeadline.class, d -> {
                        if (d.attempt() == tried && transfer != null) {
                            transfer.abort("no complete record from the pool manager within " + perHolder.toMillis()
                                    + " ms");
                        }
                        return Behaviors.same(); // the transfer ends next, and the next holder is tried
                    })
                    .onMessage(Answered.class, a -> Behaviors.same())
                    .build();
        }
    }
}

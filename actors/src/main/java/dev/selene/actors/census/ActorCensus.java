package dev.selene.actors.census;

import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorPath;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.MailboxSelector;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The live actors of one actor system that were spawned with {@link #MAILBOX}, and per actor kind the messages
 * they handled: what {@code GET /actors} lists, read without sending any actor a message.
 *
 * <p>The counted mailbox registers an actor when Pekko creates its mailbox and forgets it when the mailbox is
 * cleaned up (the actor stopped). Per message it adds one to its kind's handled counter (a {@link LongAdder}, no
 * allocation); a mailbox's depth is read from its queue when a census is taken.
 */
public final class ActorCensus implements Extension {

    /** Spawn with these props to be counted: an unbounded mailbox that reports to the system's census. */
    public static final Props MAILBOX = MailboxSelector.fromConfig(CountedMailbox.CONFIG_PATH);

    static final Id ID = new Id();

    private final Map<String, LongAdder> handled = new ConcurrentHashMap<>();
    private final Map<CountedMailbox.Queue, Boolean> live = new ConcurrentHashMap<>();

    private ActorCensus() {
    }

    /** The census of {@code system}. */
    public static ActorCensus of(ActorSystem<?> system) {
        return ID.get(Adapter.toClassic(system));
    }

    /** The kind of the actor at {@code path}, from the node's naming: {@code RecordActor}, {@code Catalog}, ... */
    public static String kindOf(ActorPath path) {
        String name = path.name();
        if (name.startsWith("$")) {
            return "catalog".equals(path.parent().name()) ? "RecordActor" : "anonymous";
        }
        if (name.startsWith("restore-")) {
            return "RestoreTask";
        }
        return switch (name) {
            case "catalog" -> "Catalog";
            case "disk-store" -> "DiskStore";
            case "pool-store" -> "PoolStore";
            default -> "user".equals(name) || "system".equals(path.parent().name()) ? "HostCache" : name;
        };
    }

    /** Takes the census: up to {@code maxActors} live actors by path, and every kind's figures. */
    public Snapshot snapshot(int maxActors) {
        Map<String, long[]> byKind = new TreeMap<>();
        handled.forEach((kind, count) -> byKind.put(kind, new long[]{0, 0, count.sum()}));
        List<Actor> actors = new ArrayList<>();
        int total = 0;
        for (CountedMailbox.Queue q : live.keySet()) {
            int depth = q.numberOfMessages();
            long[] k = byKind.computeIfAbsent(q.kind(), x -> new long[3]);
            k[0]++;
            k[1] += depth;
            total++;
            if (actors.size() < maxActors) {
                actors.add(new Actor(q.path().toStringWithoutAddress(), q.kind(), depth));
            }
        }
        actors.sort(Comparator.comparing(Actor::path));
        List<Kind> kinds = new ArrayList<>();
        byKind.forEach((kind, k) -> kinds.add(new Kind(kind, (int) k[0], k[1], k[2])));
        return new Snapshot(total, actors, kinds);
    }

    LongAdder handledOf(String kind) {
        return handled.computeIfAbsent(kind, k -> new LongAdder());
    }

    void register(CountedMailbox.Queue queue) {
        live.put(queue, Boolean.TRUE);
    }

    void unregister(CountedMailbox.Queue queue) {
        live.remove(queue);
    }

    /** A census: how many actors live, up to the asked number of them, and the figures of each kind. */
    public record Snapshot(int total, List<Actor> actors, List<Kind> kinds) {
    }

    /** One live actor (its path without the address) and the messages waiting in its mailbox. */
    public record Actor(String path, String kind, int mailbox) {
    }

    /**
     * One kind of actor: how many live, the messages waiting in their mailboxes, and the messages they have handled
     * since the system started (those of stopped actors included).
     */
    public record Kind(String kind, int actors, long mailbox, long handled) {
    }

    /** The census's key among the system's extensions. */
    static final class Id extends AbstractExtensionId<ActorCensus> {
        @Override
        public ActorCensus createExtension(ExtendedActorSystem system) {
            return new ActorCensus();
        }
    }
}

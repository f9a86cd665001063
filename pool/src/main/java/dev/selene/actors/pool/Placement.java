package dev.selene.actors.pool;

import dev.selene.engine.key.RecordKey;
import org.apache.pekko.actor.typed.ActorRef;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * Where a record's replicas go: the stores ranked by rendezvous hashing of the record's key with each store's
 * address, so that every node (host or manager) that sees the same stores ranks them alike, and a store that comes
 * or goes moves only the records it ranks first for.
 */
public final class Placement {

    private Placement() {
    }

    /** {@code stores} ranked for {@code key}, best first. */
    public static <S extends ActorRef<?>> List<S> ranked(RecordKey key, Collection<S> stores) {
        return stores.stream()
                .sorted(Comparator.comparingLong((S s) -> -score(key, s)).thenComparing(s -> s.path().toString()))
                .toList();
    }

    private static long score(RecordKey key, ActorRef<?> store) {
        return score(key, store.path().address().toString());
    }

    /** The rank score of {@code key} with the store of the node at {@code address} ({@code pekko://name@host:port}). */
    static long score(RecordKey key, String address) {
        long h = key.hash() * 0x9E3779B97F4A7C15L ^ address.hashCode();
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return h;
    }
}

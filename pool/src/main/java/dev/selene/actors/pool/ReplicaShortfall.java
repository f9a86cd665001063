package dev.selene.actors.pool;

import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How many records the directory shards running on this manager know to be short of their replicas (held by fewer
 * stores than the pool keeps replicas, with that many stores up): 0 once every copy the directory asked for has
 * landed. What an operator waits for between stopping two managers of a rolling restart.
 */
public final class ReplicaShortfall implements Extension {

    private static final ExtensionId<ReplicaShortfall> ID = new ExtensionId<>() {
        @Override
        public ReplicaShortfall createExtension(ActorSystem<?> system) {
            return new ReplicaShortfall();
        }
    };

    private final Map<Integer, Integer> byShard = new ConcurrentHashMap<>();

    private ReplicaShortfall() {
    }

    /** This manager's count. */
    public static ReplicaShortfall get(ActorSystem<?> system) {
        return ID.apply(system);
    }

    void set(int shard, int records) {
        if (records == 0) {
            byShard.remove(shard);
        } else {
            byShard.put(shard, records);
        }
    }

    void remove(int shard) {
        byShard.remove(shard);
    }

    /** Records short of replicas, over the directory shards running here. */
    public long total() {
        return byShard.values().stream().mapToLong(Integer::longValue).sum();
    }
}

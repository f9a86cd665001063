package dev.selene.actors.restore;

import dev.selene.actors.api.LookupResult;
import dev.selene.actors.api.Tier;
import dev.selene.actors.disk.DiskTier;
import dev.selene.actors.memory.MemoryTier;
import dev.selene.engine.disk.DiskIndex;
import dev.selene.engine.index.ChainMatch;
import dev.selene.engine.key.RecordSpec;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.util.ArrayList;
import java.util.List;

/** One lookup across memory and disk (B14): the match, and for each of its records the tier it lives in. */
public final class LookupTask {

    private LookupTask() {
    }

    /** The protocol (internal: only the tiers' replies arrive). */
    public sealed interface Command {
    }

    private record MemoryLocated(MemoryTier.Resident resident) implements Command {
    }

    private record DiskLocated(DiskTier.Located located) implements Command {
    }

    /** Answers {@code replyTo} with the match of {@code chain}; memory wins where a record is in both. */
    public static Behavior<Command> create(ActorRef<MemoryTier.Command> memory, ActorRef<DiskTier.Command> disk,
                                        String namespace, long[] chain, int tokensPerRecord,
                                        dev.selene.actors.metrics.CacheCounters counters,
                                        ActorRef<LookupResult> replyTo) {
        return Behaviors.<Command>setup(ctx -> {
            memory.tell(new MemoryTier.Locate(namespace, chain,
                    ctx.messageAdapter(MemoryTier.Resident.class, MemoryLocated::new)));
            disk.tell(new DiskTier.Locate(namespace, chain,
                    ctx.messageAdapter(DiskTier.Located.class, DiskLocated::new)));
            @SuppressWarnings("unchecked")
            List<RecordSpec>[] mem = new List[1];
            @SuppressWarnings("unchecked")
            List<DiskIndex.Entry>[] dsk = new List[1];
            return Behaviors.receive(Command.class)
                    .onMessage(MemoryLocated.class, m -> {
                        mem[0] = m.resident().specs();
                        return answerWhenBoth(mem[0], dsk[0], tokensPerRecord, counters, replyTo);
                    })
                    .onMessage(DiskLocated.class, d -> {
                        dsk[0] = d.located().entries();
                        return answerWhenBoth(mem[0], dsk[0], tokensPerRecord, counters, replyTo);
                    })
                    .build();
        });
    }

    private static Behavior<Command> answerWhenBoth(List<RecordSpec> mem, List<DiskIndex.Entry> disk,
                                                    int tokensPerRecord,
                                                    dev.selene.actors.metrics.CacheCounters counters,
                                                    ActorRef<LookupResult> replyTo) {
        if (mem == null || disk == null) {
            return Behaviors.same();
        }
        int depth = ChainMatch.depth(mem.size(), i -> mem.get(i) != null || disk.get(i) != null,
                i -> (mem.get(i) != null ? mem.get(i) : disk.get(i).spec()).hasRow());
        List<LookupResult.Located> located = new ArrayList<>(depth);
        for (int i = 0; i < depth; i++) {
            RecordSpec s = mem.get(i) != null ? mem.get(i) : disk.get(i).spec();
            located.add(new LookupResult.Located(s.key(), s.hasRow(), mem.get(i) != null ? Tier.MEMORY : Tier.DISK));
        }
        counters.increment("lookup.total");
        if (depth > 0) {
            counters.increment("lookup.hits");
            counters.add("lookup.hit_tokens", (long) depth * tokensPerRecord);
        }
        replyTo.tell(depth == 0 ? LookupResult.none() : new LookupResult(located, (long) depth * tokensPerRecord));
        return Behaviors.stopped();
    }
}

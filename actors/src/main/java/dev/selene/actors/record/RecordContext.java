package dev.selene.actors.record;

import dev.selene.actors.api.PublishResult;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.slots.SlotPool;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What every record-handling actor of one node shares: the layout, the host mapping, the device copier, the
 * slot pool, counters and traces.
 */
public record RecordContext(Layout layout, HostMemory host, DeviceCopier copier, ActorRef<SlotPool.Command> slotPool,
                            CacheCounters counters, TraceBook traces) {

    /** Answers a publisher and counts the answer by its label. */
    public void reply(ActorRef<PublishResult> replyTo, PublishResult result) {
        counters.increment("publish." + result.label());
        replyTo.tell(result);
    }
}

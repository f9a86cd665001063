package dev.selene.actors.record;

import dev.selene.actors.api.PublishResult;
import dev.selene.actors.cache.FaultInjection;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.slots.SlotPool;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.typed.ActorRef;

import java.time.Duration;

/**
 * What every record-handling actor of one node shares: the layout, the host mapping, the device copier, the
 * slot pool, counters and traces.
 */
public record RecordContext(Layout layout, HostMemory host, DeviceCopier copier, ActorRef<SlotPool.Command> slotPool,
                            CacheCounters counters, TraceBook traces, FaultInjection faults, Duration writeCheck) {

    /** How long a record actor waits for its write's answer before it asks the disk store how the write ended. */
    public static final Duration DEFAULT_WRITE_CHECK = Duration.ofMinutes(2);

    /** A context that injects no faults. */
    public RecordContext(Layout layout, HostMemory host, DeviceCopier copier, ActorRef<SlotPool.Command> slotPool,
                         CacheCounters counters, TraceBook traces) {
        this(layout, host, copier, slotPool, counters, traces, FaultInjection.NONE, DEFAULT_WRITE_CHECK);
    }

    /** Answers a publisher and counts the answer by its label. */
    public void reply(ActorRef<PublishResult> replyTo, PublishResult result) {
        counters.increment("publish." + result.label());
        replyTo.tell(result);
    }
}

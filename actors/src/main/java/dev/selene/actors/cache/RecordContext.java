package dev.selene.actors.cache;

import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.typed.ActorRef;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * What every record-handling actor of one node shares: the layout, the host mapping, the device copier, the
 * metrics, traces and the node's clock (the host slots' booking is the catalog's).
 */
record RecordContext(Layout layout, HostMemory host, DeviceCopier copier, CacheMetrics metrics, TraceBook traces,
                     FaultInjection faults, Duration writeCheck, LongSupplier clock, DeviceTransfers transfers) {

    /** How long a record actor waits for its write's answer before it asks the disk store how the write ended. */
    static final Duration DEFAULT_WRITE_CHECK = Duration.ofMinutes(2);

    /** A context that injects no faults, on the system nano clock. */
    RecordContext(Layout layout, HostMemory host, DeviceCopier copier, CacheMetrics metrics,
                  TraceBook traces) {
        this(layout, host, copier, metrics, traces, FaultInjection.NONE, DEFAULT_WRITE_CHECK,
                System::nanoTime, new DeviceTransfers());
    }

    /** Answers a publisher and counts the answer. */
    void reply(ActorRef<PublishResult> replyTo, PublishResult result) {
        metrics.publication(result);
        replyTo.tell(result);
    }
}

package dev.selene.node.workload;

import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.gpu.DevicePlacement;

/** One conversation: its chain of keys and, while its snapshot lives, the device placement of each record. */
final class Conversation {

    final long[] chain;
    final RecordSpec[] specs;
    final long[] snapshotBase;
    final DevicePlacement[] snapshots;

    Conversation(long[] chain, RecordSpec[] specs) {
        this.chain = chain;
        this.specs = specs;
        this.snapshotBase = new long[chain.length];
        this.snapshots = new DevicePlacement[chain.length];
    }
}

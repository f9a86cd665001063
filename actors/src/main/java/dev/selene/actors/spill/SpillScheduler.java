package dev.selene.actors.spill;

import dev.selene.actors.disk.DiskTier;
import dev.selene.actors.memory.MemoryTier;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.slots.SlotPool;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.spill.SpillPlanner;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides what the memory tier writes to disk and when (B4, B11, B12), and runs the drain at shutdown (B8).
 *
 * <p>It acts on the slot pool's pressure reports: it asks the memory tier for the coldest parked records, lets
 * its {@link SpillPlanner} pick the writes (ancestors first, within the in-flight cap and the pressure target),
 * pins them, and hands them to the disk tier. A committed write makes its record clean, which lets the pool
 * drop it on demand. Nothing is written at publish time.
 */
public final class SpillScheduler extends AbstractBehavior<SpillScheduler.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** Spills everything parked, ancestors first, then replies; records that cannot be written are skipped. */
    public record Drain(Duration timeout, ActorRef<DrainReport> replyTo) implements Command {
    }

    /** Asks for the scheduler's figures. */
    public record GetStats(ActorRef<Stats> replyTo) implements Command {
    }

    private record PressureReported(SlotPool.Pressure pressure) implements Command {
    }

    private record CandidatesReceived(MemoryTier.Candidates candidates) implements Command {
    }

    private record Pinned(MemoryTier.PinnedForSpill pinned) implements Command {
    }

    private record WriteAnswered(DiskTier.WriteReply reply) implements Command {
    }

    private record DiskDropped(DiskTier.Dropped dropped) implements Command {
    }

    private enum DrainTimeout implements Command {
        INSTANCE
    }

    private enum Recheck implements Command {
        INSTANCE
    }

    /** While pressure lasts and nothing could be planned, how often to look for parked records again. */
    static final Duration RECHECK_INTERVAL = Duration.ofMillis(5);

    /** What a drain did. */
    public record DrainReport(int written, int skipped, boolean timedOut) {
    }

    /** The scheduler's figures. */
    public record Stats(int inFlight, int maxInFlight, int cap, long slotsInFlight, long written, long failed) {
    }

    /** How long a parked record's chain must hang from nothing before the record is dropped as an orphan. */
    static final Duration ORPHAN_GRACE = Duration.ofSeconds(5);

    /** Candidates asked for per planning round. */
    static final int CANDIDATES_PER_ROUND = 256;

    private final ActorRef<MemoryTier.Command> memory;
    private final ActorRef<DiskTier.Command> disk;
    private final CacheCounters counters;
    private final TraceBook traces;
    private final SpillPlanner planner;
    private final ActorRef<MemoryTier.Candidates> candidatesAdapter;
    private final ActorRef<MemoryTier.PinnedForSpill> pinnedAdapter;
    private final ActorRef<DiskTier.WriteReply> writeAdapter;
    private final Map<RecordKey, RecordSpec> pinnedSpecs = new HashMap<>();
    private final Map<RecordKey, dev.selene.engine.slots.SlotList> pinnedSlots = new HashMap<>();
    private long targetSlots;
    private boolean asking;
    private long written;
    private long failed;
    private ActorRef<DrainReport> drainReplyTo;
    private int drainWritten;
    private int drainSkipped;

    /** A scheduler writing at most {@code inFlightCap} records at once. */
    public static Behavior<Command> create(ActorRef<MemoryTier.Command> memory, ActorRef<DiskTier.Command> disk,
                                           ActorRef<SlotPool.Command> slotPool, List<RecordKey> committed,
                                           int inFlightCap, CacheCounters counters, TraceBook traces) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new SpillScheduler(ctx, timers, memory, disk,
                slotPool, committed, inFlightCap, counters, traces)));
    }

    private final org.apache.pekko.actor.typed.javadsl.TimerScheduler<Command> timers;

    private SpillScheduler(ActorContext<Command> ctx, org.apache.pekko.actor.typed.javadsl.TimerScheduler<Command> timers,
                           ActorRef<MemoryTier.Command> memory, ActorRef<DiskTier.Command> disk,
                           ActorRef<SlotPool.Command> slotPool, List<RecordKey> committed, int inFlightCap,
                           CacheCounters counters, TraceBook traces) {
        super(ctx);
        this.timers = timers;
        this.memory = memory;
        this.disk = disk;
        this.counters = counters;
        this.traces = traces;
        this.planner = new SpillPlanner(inFlightCap);
        committed.forEach(planner::knownCommitted);
        this.candidatesAdapter = ctx.messageAdapter(MemoryTier.Candidates.class, CandidatesReceived::new);
        this.pinnedAdapter = ctx.messageAdapter(MemoryTier.PinnedForSpill.class, Pinned::new);
        this.writeAdapter = ctx.messageAdapter(DiskTier.WriteReply.class, WriteAnswered::new);
        slotPool.tell(new SlotPool.Attach(null, ctx.messageAdapter(SlotPool.Pressure.class, PressureReported::new)));
        disk.tell(new DiskTier.AttachListener(ctx.messageAdapter(DiskTier.Dropped.class, DiskDropped::new)));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder().onMessage(Command.class, this::onCommand).build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case PressureReported p -> {
                targetSlots = p.pressure().deficitSlots();
                askForCandidates();
            }
            case CandidatesReceived c -> onCandidates(c.candidates().candidates());
            case Pinned p -> onPinned(p.pinned());
            case WriteAnswered w -> onWriteAnswered(w.reply());
            case DiskDropped d -> onDiskDropped(d.dropped().keys());
            case Drain d -> onDrain(d);
            case DrainTimeout t -> finishDrain(true);
            case Recheck r -> askForCandidates();
            case GetStats g -> g.replyTo().tell(new Stats(planner.inFlight(), planner.maxInFlight(),
                    planner.inFlightCap(), planner.slotsInFlight(), written, failed));
        }
        return this;
    }

    private boolean draining() {
        return drainReplyTo != null;
    }

    private void askForCandidates() {
        if (!asking && (targetSlots > planner.slotsInFlight() || draining())
                && planner.inFlight() < planner.inFlightCap()) {
            asking = true;
            memory.tell(new MemoryTier.SpillCandidates(CANDIDATES_PER_ROUND, candidatesAdapter));
        }
    }

    private void onCandidates(List<SpillPlanner.Candidate> candidates) {
        asking = false;
        List<RecordKey> committed = planner.alreadyCommitted(candidates);
        if (!committed.isEmpty()) {
            memory.tell(new MemoryTier.MarkDurable(committed));
        }
        List<RecordKey> orphans = planner.orphans(candidates, System.nanoTime(), ORPHAN_GRACE.toNanos());
        if (!orphans.isEmpty()) {
            counters.add("spill.orphans", orphans.size());
            memory.tell(new MemoryTier.DropOrphans(orphans));
        }
        long target = draining() ? Long.MAX_VALUE : targetSlots;
        List<RecordSpec> start = planner.plan(candidates, target);
        if (start.isEmpty() && (targetSlots > planner.slotsInFlight() || draining())
                && planner.inFlight() < planner.inFlightCap()) {
            // Under pressure with nothing writable yet (records still being published, or waiting on an
            // ancestor's write): look again shortly rather than wait for the pool's next report.
            timers.startSingleTimer(Recheck.INSTANCE, RECHECK_INTERVAL);
        }
        if (start.isEmpty()) {
            if (draining() && planner.inFlight() == 0) {
                drainSkipped = (int) candidates.stream().filter(c -> !planner.isCommitted(c.key())).count();
                finishDrain(false);
            }
            return;
        }
        List<RecordKey> keys = start.stream().map(RecordSpec::key).toList();
        for (RecordSpec s : start) {
            pinnedSpecs.put(s.key(), s);
            traces.append(s.key(), "SpillScheduler", "Spill planned (" + planner.inFlight() + " in flight)");
        }
        memory.tell(new MemoryTier.PinForSpill(keys, pinnedAdapter));
    }

    private void onPinned(MemoryTier.PinnedForSpill pinned) {
        for (RecordKey gone : pinned.missing()) {
            pinnedSpecs.remove(gone);
            planner.cancel(gone); // no longer parked: nothing to write
        }
        for (MemoryTier.PinnedRecord r : pinned.records()) {
            pinnedSlots.put(r.spec().key(), r.slots());
            disk.tell(new DiskTier.Write(r.spec(), r.slots(), writeAdapter));
        }
        askForCandidates();
    }

    private void onWriteAnswered(DiskTier.WriteReply reply) {
        switch (reply) {
            case DiskTier.Written w -> {
                planner.committed(w.key());
                pinnedSpecs.remove(w.key());
                pinnedSlots.remove(w.key());
                written++;
                counters.increment("spill.written");
                if (draining()) {
                    drainWritten++;
                }
                memory.tell(new MemoryTier.SpillCommitted(w.key()));
            }
            case DiskTier.WriteFailed f when f.parentGone() -> {
                planner.cancel(f.key());
                pinnedSpecs.remove(f.key());
                pinnedSlots.remove(f.key());
                memory.tell(new MemoryTier.Unpin(List.of(f.key())));
            }
            case DiskTier.WriteFailed f -> {
                failed++;
                SpillPlanner.FailureAction action = planner.failed(f.key(), f.diskFull());
                traces.append(f.key(), "SpillScheduler", "WriteFailed (" + f.reason() + ") -> " + action);
                if (action == SpillPlanner.FailureAction.RETRY) {
                    disk.tell(new DiskTier.Write(pinnedSpecs.get(f.key()), pinnedSlots.get(f.key()), writeAdapter));
                } else {
                    pinnedSpecs.remove(f.key());
                    pinnedSlots.remove(f.key());
                    counters.increment("spill.given_up");
                    memory.tell(new MemoryTier.SpillGivenUp(f.key()));
                }
            }
        }
        askForCandidates();
    }

    private void onDiskDropped(List<RecordKey> keys) {
        keys.forEach(planner::forget);
        memory.tell(new MemoryTier.DurableCopiesGone(keys));
    }

    private void onDrain(Drain d) {
        if (draining()) {
            d.replyTo().tell(new DrainReport(0, 0, false));
            return;
        }
        drainReplyTo = d.replyTo();
        drainWritten = 0;
        drainSkipped = 0;
        timers.startSingleTimer(DrainTimeout.INSTANCE, d.timeout());
        getContext().getLog().info("draining parked records to disk (timeout {})", d.timeout());
        askForCandidates();
    }

    private void finishDrain(boolean timedOut) {
        if (!draining()) {
            return;
        }
        timers.cancel(DrainTimeout.INSTANCE);
        getContext().getLog().info("drain {}: {} records written, {} skipped", timedOut ? "timed out" : "done",
                drainWritten, drainSkipped);
        drainReplyTo.tell(new DrainReport(drainWritten, drainSkipped, timedOut));
        drainReplyTo = null;
    }
}

package dev.selene.actors.store;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.typed.ActorRef;

import java.util.List;

/**
 * The one protocol of the node's durable stores (the disk store, and the remote tier a {@link RemoteTier} provides):
 * write a record from its pinned slots, read one into staging slots, delete, and settle a write or read whose answer
 * was lost. A store executes and reports; which records it holds is the catalog's to know. A remote tier answers two
 * more: which part of a chain it holds ({@link Find}) and what it can hold ({@link WatchCapacity}).
 */
public final class Store {

    /**
     * The protocol every store answers. Each store adds its own internal messages, so it is not sealed; a store
     * treats a command of another store's as a programming error.
     */
    public interface Command {
    }

    /** Writes a record's slots (pinned by the catalog until the reply) to its record file. */
    public record Write(RecordSpec spec, SlotList slots, ActorRef<WriteReply> replyTo) implements Command {
    }

    /** Reads a committed record into staging slots. */
    public record Read(RecordKey key, SlotList slots, ActorRef<ReadReply> replyTo) implements Command {
    }

    /** Deletes record files (the catalog removed them). */
    public record Delete(List<RecordKey> keys) implements Command {
    }

    /** Replies with the outcome of the write of {@code key} once it has ended (at once when none is running). */
    public record Settle(RecordKey key, ActorRef<WriteReply> replyTo) implements Command {
    }

    /**
     * Replies with the outcome of the read of {@code key} into {@code slots} once it has ended (at once when none is
     * running: then nothing writes into those slots).
     */
    public record SettleRead(RecordKey key, SlotList slots, ActorRef<ReadReply> replyTo) implements Command {
    }

    /** Replies to {@link Write} and {@link Settle}. */
    public sealed interface WriteReply {
        /** The record written. */
        RecordKey key();
    }

    /** The record file committed. */
    public record Written(RecordKey key, long bytes, long nanos) implements WriteReply {
    }

    /** The write failed; nothing of it is visible. {@code diskFull} for ENOSPC. */
    public record WriteFailed(RecordKey key, boolean diskFull, String reason) implements WriteReply {
    }

    /** Replies to {@link Read}. */
    public sealed interface ReadReply {
        /** The record read. */
        RecordKey key();
    }

    /** The record's bytes are in the staging slots, checksums verified. */
    public record ReadDone(RecordKey key, long bytes) implements ReadReply {
    }

    /**
     * The read failed; nothing in the slots may be used. {@code fileLost} when the file is gone or was quarantined
     * (it failed validation), so the catalog forgets it.
     */
    public record ReadFailed(RecordKey key, boolean fileLost, String reason) implements ReadReply {
    }

    /** Reply to {@link Settle}: no write of the record ran (its request was lost); it may be written again. */
    public record NotWritten(RecordKey key) implements WriteReply {
    }

    /**
     * Asks a remote tier for the longest run of {@code chain} (record key hashes, in order) it holds, so that a
     * match can go on where the node's own tiers end.
     */
    public record Find(String namespace, List<Long> chain, ActorRef<Found> replyTo) implements Command {
    }

    /** Reply to {@link Find}: the records held, in chain order (empty when the tier could not tell in time). */
    public record Found(List<Held> entries) {
    }

    /**
     * A record a remote tier holds: its key, its parent's key (null for a root), whether it carries a row, and the
     * bytes a read of it moves.
     */
    public record Held(RecordKey key, RecordKey parent, boolean hasRow, long bytes) {
        /** The record's spec. */
        public RecordSpec spec() {
            return new RecordSpec(key, parent, hasRow);
        }
    }

    /**
     * Asks a remote tier to tell {@code replyTo} what it can hold ({@link Capacity}) now, once it is known, and
     * whenever it changes (the catalog of a node whose only durable tier is the remote one bounds what it remembers
     * by it).
     */
    public record WatchCapacity(ActorRef<Capacity> replyTo) implements Command {
    }

    /** What a remote tier can hold for this node, in record bytes, and on how many machines. */
    public record Capacity(long bytes, int managers) {
    }

    /** How many ended writes a store remembers, so that a {@link Settle} for one whose answer was lost finds it. */
    public static final int RECENT_OUTCOMES = 1024;

    private Store() {
    }
}

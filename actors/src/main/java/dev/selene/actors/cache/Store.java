package dev.selene.actors.cache;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import org.apache.pekko.actor.typed.ActorRef;

import java.util.List;

/**
 * The one protocol of the node's durable stores (the disk store and the pool store): write a record from its
 * pinned slots, read one into staging slots, delete, and settle a write or read whose answer was lost. A store
 * executes and reports; which records it holds is the catalog's to know.
 */
final class Store {

    /**
     * The protocol every store answers. Each store adds its own internal messages, so it is not sealed; a store
     * treats a command of another store's as a programming error.
     */
    interface Command {
    }

    /** Writes a record's slots (pinned by the catalog until the reply) to its record file. */
    record Write(RecordSpec spec, SlotList slots, ActorRef<WriteReply> replyTo) implements Command {
    }

    /** Reads a committed record into staging slots. */
    record Read(RecordKey key, SlotList slots, ActorRef<ReadReply> replyTo) implements Command {
    }

    /** Deletes record files (the catalog removed them). */
    record Delete(List<RecordKey> keys) implements Command {
    }

    /** Replies with the outcome of the write of {@code key} once it has ended (at once when none is running). */
    record Settle(RecordKey key, ActorRef<WriteReply> replyTo) implements Command {
    }

    /**
     * Replies with the outcome of the read of {@code key} into {@code slots} once it has ended (at once when none is
     * running: then nothing writes into those slots).
     */
    record SettleRead(RecordKey key, SlotList slots, ActorRef<ReadReply> replyTo) implements Command {
    }

    /** Replies to {@link Write} and {@link Settle}. */
    sealed interface WriteReply {
        /** The record written. */
        RecordKey key();
    }

    /** The record file committed. */
    record Written(RecordKey key, long bytes, long nanos) implements WriteReply {
    }

    /** The write failed; nothing of it is visible. {@code diskFull} for ENOSPC. */
    record WriteFailed(RecordKey key, boolean diskFull, String reason) implements WriteReply {
    }

    /** Replies to {@link Read}. */
    sealed interface ReadReply {
        /** The record read. */
        RecordKey key();
    }

    /** The record's bytes are in the staging slots, checksums verified. */
    record ReadDone(RecordKey key, long bytes) implements ReadReply {
    }

    /**
     * The read failed; nothing in the slots may be used. {@code fileLost} when the file is gone or was quarantined
     * (it failed validation), so the catalog forgets it.
     */
    record ReadFailed(RecordKey key, boolean fileLost, String reason) implements ReadReply {
    }

    /** Reply to {@link Settle}: no write of the record ran (its request was lost); it may be written again. */
    record NotWritten(RecordKey key) implements WriteReply {
    }

    private Store() {
    }
}

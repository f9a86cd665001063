package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Writes, reads and deletes record files (the format of {@link dev.selene.engine.codec.RecordFileFormat}).
 *
 * <p>Every method blocks and is safe to call from several threads at once; writes of different records overlap.
 * Callers run them on a dedicated blocking dispatcher, never on the actors' default one. Format problems are
 * {@link dev.selene.engine.codec.RecordFormatException}s, failed system calls {@link NativeIoException}s.
 */
public interface RecordIo {

    /** A committed record file and its length. */
    record WriteResult(Path file, long bytes) {
    }

    /**
     * Writes the record whose shares are in {@code source} to {@link #fileOf(Path, RecordKey) its file} in
     * {@code dir} and commits it: temporary → preallocate → body → footer last → fsync → rename → directory fsync.
     * When this returns the file is durable and complete. When it throws an exception, the temporary is removed and
     * nothing this write produced is visible under the record's name (an earlier file of the same key that the
     * rename had already replaced is gone too). An {@link Error} is treated as the process dying: nothing is cleaned
     * up, as after a crash.
     *
     * @throws IllegalStateException when a write of the same record is already in progress
     */
    WriteResult write(RecordSpec spec, Layout layout, ShareMemory source, Path dir) throws IOException;

    /**
     * Reads the record file {@code file}, written under {@code layout}, into {@code target}, checking every
     * checksum; returns its header. On failure the target's contents are undefined.
     */
    RecordHeader read(Path file, Layout layout, ShareMemory target) throws IOException;

    /**
     * Reads and checks a file's header and footer and its length, without its body; returns the header. From
     * version 2 that validates everything but the body's bytes.
     */
    RecordHeader readHeader(Path file) throws IOException;

    /** Reads the whole file through a scratch buffer and checks every checksum, as {@link #read} would. */
    RecordHeader verify(Path file, Layout layout) throws IOException;

    /** Deletes a record file durably (directory fsync); returns whether it existed. */
    boolean delete(Path file) throws IOException;

    /** The committed file of {@code key} in {@code dir}. */
    default Path fileOf(Path dir, RecordKey key) {
        return RecordFileNames.recordFile(dir, key);
    }
}

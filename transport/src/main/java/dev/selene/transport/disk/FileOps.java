package dev.selene.transport.disk;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

/**
 * The file system calls a {@link DirectRecordIo} makes: the seam where tests inject EIO, ENOSPC, stalls and
 * crashes, as Lucene's fault-injecting directory wraps the real one.
 */
interface FileOps {

    /** Creates (or truncates) {@code file} for direct writes. */
    OpenFile create(Path file) throws IOException;

    /** Opens {@code file} for direct reads. */
    OpenFile openForRead(Path file) throws IOException;

    /** Allocates {@code length} bytes for the file (fallocate). */
    void preallocate(OpenFile file, long length) throws IOException;

    /** Sets the file's length without allocating (ftruncate). */
    void setLength(OpenFile file, long length) throws IOException;

    /** Writes {@code buffers} back to back at {@code offset}; returns the bytes written. */
    long write(OpenFile file, List<MemorySegment> buffers, long offset) throws IOException;

    /** Reads into {@code buffers} back to back from {@code offset}; returns the bytes read, 0 at end of file. */
    long read(OpenFile file, List<MemorySegment> buffers, long offset) throws IOException;

    /** Flushes the file to the device (fsync). */
    void sync(OpenFile file) throws IOException;

    /** Closes the file. */
    void close(OpenFile file) throws IOException;

    /** Atomically renames {@code from} to {@code to}, replacing {@code to}. */
    void rename(Path from, Path to) throws IOException;

    /** Flushes the directory's entries to the device. */
    void syncDirectory(Path dir) throws IOException;

    /** Deletes {@code file} if it exists; returns whether it did. */
    boolean delete(Path file) throws IOException;

    /** Length of {@code file} in bytes. */
    long size(Path file) throws IOException;
}

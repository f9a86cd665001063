package dev.selene.transport.disk;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/** The real file system calls: O_DIRECT descriptors through {@link NativeIo}, renames and deletes through NIO. */
final class NativeFileOps implements FileOps {

    static final NativeFileOps INSTANCE = new NativeFileOps();

    private NativeFileOps() {
    }

    @Override
    public OpenFile create(Path file) throws IOException {
        return new OpenFile(NativeIo.openDirectForWrite(file), file);
    }

    @Override
    public OpenFile openForRead(Path file) throws IOException {
        return new OpenFile(NativeIo.openDirectForRead(file), file);
    }

    @Override
    public void preallocate(OpenFile file, long length) throws IOException {
        NativeIo.fallocate(file.fd(), length, file.path());
    }

    @Override
    public void setLength(OpenFile file, long length) throws IOException {
        NativeIo.ftruncate(file.fd(), length, file.path());
    }

    @Override
    public long write(OpenFile file, List<MemorySegment> buffers, long offset) throws IOException {
        return buffers.size() == 1 ? NativeIo.pwrite(file.fd(), buffers.getFirst(), offset, file.path())
                : NativeIo.pwritev(file.fd(), buffers, offset, file.path());
    }

    @Override
    public long read(OpenFile file, List<MemorySegment> buffers, long offset) throws IOException {
        return buffers.size() == 1 ? NativeIo.pread(file.fd(), buffers.getFirst(), offset, file.path())
                : NativeIo.preadv(file.fd(), buffers, offset, file.path());
    }

    @Override
    public void sync(OpenFile file) throws IOException {
        NativeIo.fsync(file.fd(), file.path());
    }

    @Override
    public void close(OpenFile file) throws IOException {
        NativeIo.close(file.fd(), file.path());
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        NativeIo.fsyncDirectory(dir);
    }

    @Override
    public boolean delete(Path file) throws IOException {
        return Files.deleteIfExists(file);
    }

    @Override
    public long size(Path file) throws IOException {
        return Files.size(file);
    }
}

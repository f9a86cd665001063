package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.io.IOException;
import java.nio.file.Path;

/** A record I/O that hands every call to the real one: the base of the test doubles that change or watch one call. */
public abstract class ForwardingRecordIo implements RecordIo {

    /** The record I/O every call goes to unless a subclass says otherwise. */
    protected final RecordIo real;

    protected ForwardingRecordIo(RecordIo real) {
        this.real = real;
    }

    @Override
    public WriteResult write(RecordSpec spec, Layout layout, ShareMemory source, Path dir) throws IOException {
        return real.write(spec, layout, source, dir);
    }

    @Override
    public RecordHeader read(Path file, Layout layout, ShareMemory target) throws IOException {
        return real.read(file, layout, target);
    }

    @Override
    public RecordHeader readHeader(Path file) throws IOException {
        return real.readHeader(file);
    }

    @Override
    public RecordHeader verify(Path file, Layout layout) throws IOException {
        return real.verify(file, layout);
    }

    @Override
    public boolean delete(Path file) throws IOException {
        return real.delete(file);
    }
}

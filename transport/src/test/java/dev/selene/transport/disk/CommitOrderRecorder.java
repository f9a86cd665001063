package dev.selene.transport.disk;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.codec.RecordHeader;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** The real record I/O, noting the order in which record files commit (an observer: it changes nothing). */
public final class CommitOrderRecorder implements RecordIo {

    private final RecordIo real;
    private final List<RecordKey> commitOrder;

    public CommitOrderRecorder(RecordIo real, List<RecordKey> commitOrder) {
        this.real = real;
        this.commitOrder = commitOrder;
    }

    @Override
    public WriteResult write(RecordSpec spec, Layout layout, ShareMemory source, Path dir) throws IOException {
        WriteResult r = real.write(spec, layout, source, dir);
        commitOrder.add(spec.key());
        return r;
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

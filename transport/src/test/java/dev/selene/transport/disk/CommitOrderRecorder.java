package dev.selene.transport.disk;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** The real record I/O, noting the order in which record files commit (an observer: it changes nothing). */
public final class CommitOrderRecorder extends ForwardingRecordIo {

    private final List<RecordKey> commitOrder;

    public CommitOrderRecorder(RecordIo real, List<RecordKey> commitOrder) {
        super(real);
        this.commitOrder = commitOrder;
    }

    @Override
    public WriteResult write(RecordSpec spec, Layout layout, ShareMemory source, Path dir) throws IOException {
        WriteResult r = real.write(spec, layout, source, dir);
        commitOrder.add(spec.key());
        return r;
    }
}

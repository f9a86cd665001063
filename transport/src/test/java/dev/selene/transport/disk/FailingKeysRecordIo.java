package dev.selene.transport.disk;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test double for fault injection: the real record I/O, except that writes of chosen keys fail with EIO a chosen
 * number of times (a parent that fails twice, B12).
 */
public final class FailingKeysRecordIo extends ForwardingRecordIo {

    private final Map<RecordKey, Integer> failuresLeft = new ConcurrentHashMap<>();

    public FailingKeysRecordIo(RecordIo real) {
        super(real);
    }

    /** Fails the next {@code times} writes of {@code key} with EIO. */
    public void failWrites(RecordKey key, int times) {
        failuresLeft.put(key, times);
    }

    @Override
    public WriteResult write(RecordSpec spec, Layout layout, ShareMemory source, Path dir) throws IOException {
        Integer left = failuresLeft.computeIfPresent(spec.key(), (k, n) -> n - 1);
        if (left != null && left >= 0) {
            throw new NativeIoException("pwrite", dir.resolve(spec.key().toString()), NativeIo.EIO);
        }
        return real.write(spec, layout, source, dir);
    }
}
